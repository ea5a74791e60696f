/* elfsym.c — the dynamic symbol table (.dynsym) of an ELF64 file, read with every offset
 * checked.
 *
 * The file is an agent library the user named; it may be truncated, damaged or not ELF at
 * all, and reading it must never fault. So nothing is read through a pointer into the file
 * before its range has been checked: offsets are compared with the size first and sizes
 * with what is left after the offset (never offset + size, which can wrap), the ELF
 * header's section-header size and the symbol table's entry size must be ELF64's, and the
 * string table must end in NUL. Headers and entries are copied out with memcpy, so an
 * offset that is not a multiple of 8 in a damaged file is no unaligned access. Only the
 * first .dynsym is read: an object has one. No shim state is touched (the unit tests link
 * this file alone).
 */
#include "core/elfsym.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Does [off, off + size) lie inside a file of len bytes? */
static bool in_file(uint64_t off, uint64_t size, size_t len)
{
    return off <= len && size <= len - off;
}

int elfsym_scan(const unsigned char *m, size_t len, elfsym_fn fn, void *ctx, char *err,
                size_t errlen)
{
    Elf64_Ehdr eh;
    if (len < sizeof eh)
        return fail(err, errlen, "%zu bytes: too short for an ELF header", len);
    memcpy(&eh, m, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
        return fail(err, errlen, "not an ELF file");
    if (eh.e_ident[EI_CLASS] != ELFCLASS64)
        return fail(err, errlen, "not a 64-bit ELF file");
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
#else
    if (eh.e_ident[EI_DATA] != ELFDATA2MSB)
#endif
        return fail(err, errlen, "ELF byte order is not this machine's");
    if (eh.e_shoff == 0 || eh.e_shnum == 0)
        return 0; /* no section headers (stripped of them): no table to read */
    if (eh.e_shentsize != sizeof(Elf64_Shdr))
        return fail(err, errlen, "section header size %u, not %zu", (unsigned)eh.e_shentsize,
                    sizeof(Elf64_Shdr));
    if (!in_file(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), len))
        return fail(err, errlen, "section headers (%u at offset %llu) past the end of the "
                    "file (%zu bytes)", (unsigned)eh.e_shnum, (unsigned long long)eh.e_shoff,
                    len);
    const unsigned char *shdrs = m + eh.e_shoff;
    for (unsigned s = 0; s < eh.e_shnum; s++) {
        Elf64_Shdr sh, st;
        memcpy(&sh, shdrs + (size_t)s * sizeof sh, sizeof sh);
        if (sh.sh_type != SHT_DYNSYM)
            continue;
        if (sh.sh_link == 0 || sh.sh_link >= eh.e_shnum)
            return fail(err, errlen, ".dynsym links to section %u of %u", (unsigned)sh.sh_link,
                        (unsigned)eh.e_shnum);
        memcpy(&st, shdrs + (size_t)sh.sh_link * sizeof st, sizeof st);
        if (st.sh_type != SHT_STRTAB)
            return fail(err, errlen, ".dynsym's string table (section %u) is not a string "
                        "table", (unsigned)sh.sh_link);
        if (sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_size % sizeof(Elf64_Sym) != 0)
            return fail(err, errlen, ".dynsym entry size %llu and size %llu: not whole "
                        "%zu-byte entries", (unsigned long long)sh.sh_entsize,
                        (unsigned long long)sh.sh_size, sizeof(Elf64_Sym));
        if (!in_file(sh.sh_offset, sh.sh_size, len))
            return fail(err, errlen, ".dynsym (%llu bytes at offset %llu) past the end of the "
                        "file (%zu bytes)", (unsigned long long)sh.sh_size,
                        (unsigned long long)sh.sh_offset, len);
        if (!in_file(st.sh_offset, st.sh_size, len))
            return fail(err, errlen, ".dynstr (%llu bytes at offset %llu) past the end of the "
                        "file (%zu bytes)", (unsigned long long)st.sh_size,
                        (unsigned long long)st.sh_offset, len);
        const char *strtab = (const char *)m + st.sh_offset;
        if (st.sh_size == 0 || strtab[st.sh_size - 1] != '\0')
            return fail(err, errlen, ".dynstr is empty or does not end in NUL");
        size_t count = sh.sh_size / sizeof(Elf64_Sym);
        int n = 0;
        for (size_t i = 1; i < count; i++) {
            Elf64_Sym sym;
            memcpy(&sym, m + sh.sh_offset + i * sizeof sym, sizeof sym);
            if (sym.st_name >= st.sh_size)
                continue;
            struct elfsym e = {
                .name = strtab + sym.st_name,
                .bind = ELF64_ST_BIND(sym.st_info),
                .type = ELF64_ST_TYPE(sym.st_info),
                .visibility = ELF64_ST_VISIBILITY(sym.st_other),
                .defined = sym.st_shndx != SHN_UNDEF,
            };
            n++;
            if (!fn(&e, ctx))
                break;
        }
        return n;
    }
    return 0;
}

int elfsym_each(const char *path, elfsym_fn fn, void *ctx, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, errlen, "%s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return fail(err, errlen, "%s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return fail(err, errlen, "not a regular file");
    }
    if (st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return fail(err, errlen, "%lld bytes: too short for an ELF header",
                    (long long)st.st_size);
    }
    size_t len = (size_t)st.st_size;
    void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (m == MAP_FAILED)
        return fail(err, errlen, "mmap: %s", strerror(e));
    int n = elfsym_scan(m, len, fn, ctx, err, errlen);
    munmap(m, len);
    return n;
}
