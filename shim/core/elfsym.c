/* elfsym.c — the dynamic symbol table (.dynsym) of an ELF file of this build's class (ELF64
 * on x86-64, ELF32 on i386), read with every offset checked.
 *
 * The file is an agent library the user named; it may be truncated, damaged or not ELF at
 * all, and reading it must never fault. So nothing is read through a pointer into the file
 * before its range has been checked: offsets are compared with the size first and sizes
 * with what is left after the offset (never offset + size, which can wrap), the ELF
 * header's section-header size and the symbol table's entry size must be the class's, and the
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

/* The ELF class this build reads: the one dlopen could load. */
#if UINTPTR_MAX > 0xFFFFFFFFu
typedef Elf64_Ehdr Ehdr;
typedef Elf64_Shdr Shdr;
typedef Elf64_Sym Sym;
#define ELFCLASS_NATIVE ELFCLASS64
#define ELFCLASS_WORDS "64-bit"
#define ST_BIND ELF64_ST_BIND
#define ST_TYPE ELF64_ST_TYPE
#define ST_VISIBILITY ELF64_ST_VISIBILITY
#else
typedef Elf32_Ehdr Ehdr;
typedef Elf32_Shdr Shdr;
typedef Elf32_Sym Sym;
#define ELFCLASS_NATIVE ELFCLASS32
#define ELFCLASS_WORDS "32-bit"
#define ST_BIND ELF32_ST_BIND
#define ST_TYPE ELF32_ST_TYPE
#define ST_VISIBILITY ELF32_ST_VISIBILITY
#endif

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
    Ehdr eh;
    if (len < sizeof eh)
        return fail(err, errlen, "%zu bytes: too short for an ELF header", len);
    memcpy(&eh, m, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
        return fail(err, errlen, "not an ELF file");
    if (eh.e_ident[EI_CLASS] != ELFCLASS_NATIVE)
        return fail(err, errlen, "not a " ELFCLASS_WORDS " ELF file");
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
#else
    if (eh.e_ident[EI_DATA] != ELFDATA2MSB)
#endif
        return fail(err, errlen, "ELF byte order is not this machine's");
    if (eh.e_shoff == 0 || eh.e_shnum == 0)
        return 0; /* no section headers (stripped of them): no table to read */
    if (eh.e_shentsize != sizeof(Shdr))
        return fail(err, errlen, "section header size %u, not %zu", (unsigned)eh.e_shentsize,
                    sizeof(Shdr));
    if (!in_file(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Shdr), len))
        return fail(err, errlen, "section headers (%u at offset %llu) past the end of the "
                    "file (%zu bytes)", (unsigned)eh.e_shnum, (unsigned long long)eh.e_shoff,
                    len);
    const unsigned char *shdrs = m + eh.e_shoff;
    for (unsigned s = 0; s < eh.e_shnum; s++) {
        Shdr sh, st;
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
        if (sh.sh_entsize != sizeof(Sym) || sh.sh_size % sizeof(Sym) != 0)
            return fail(err, errlen, ".dynsym entry size %llu and size %llu: not whole "
                        "%zu-byte entries", (unsigned long long)sh.sh_entsize,
                        (unsigned long long)sh.sh_size, sizeof(Sym));
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
        size_t count = sh.sh_size / sizeof(Sym);
        int n = 0;
        for (size_t i = 1; i < count; i++) {
            Sym sym;
            memcpy(&sym, m + sh.sh_offset + i * sizeof sym, sizeof sym);
            if (sym.st_name >= st.sh_size)
                continue;
            struct elfsym e = {
                .name = strtab + sym.st_name,
                .bind = ST_BIND(sym.st_info),
                .type = ST_TYPE(sym.st_info),
                .visibility = ST_VISIBILITY(sym.st_other),
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
    if (st.st_size < (off_t)sizeof(Ehdr)) {
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

int elfsym_arch(const char *path, char *out, size_t outlen, bool *foreign)
{
    *foreign = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    unsigned char id[EI_NIDENT + 4];
    ssize_t n = read(fd, id, sizeof id);
    close(fd);
    if (n < (ssize_t)sizeof id || memcmp(id, ELFMAG, SELFMAG) != 0)
        return -1;
    /* e_machine follows e_ident and e_type (2 bytes), in the file's byte order. */
    unsigned mach = id[EI_DATA] == ELFDATA2MSB ? (unsigned)id[EI_NIDENT + 2] << 8 | id[EI_NIDENT + 3]
                                               : (unsigned)id[EI_NIDENT + 3] << 8 | id[EI_NIDENT + 2];
    const char *name;
    switch (mach) {
    case EM_386: name = "i386"; break;
    case EM_X86_64: name = "x86-64"; break;
    case EM_AARCH64: name = "aarch64"; break;
    case EM_ARM: name = "arm"; break;
    default: name = NULL; break;
    }
    int cls = id[EI_CLASS] == ELFCLASS32 ? 32 : id[EI_CLASS] == ELFCLASS64 ? 64 : 0;
    if (name != NULL)
        snprintf(out, outlen, "%s (ELF%d)", name, cls);
    else
        snprintf(out, outlen, "machine %u (ELF%d)", mach, cls);
#if defined(__x86_64__)
    *foreign = mach != EM_X86_64 || id[EI_CLASS] != ELFCLASS64;
#elif defined(__i386__)
    *foreign = mach != EM_386 || id[EI_CLASS] != ELFCLASS32;
#endif
    return 0;
}
