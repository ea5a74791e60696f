/* test_elfsym.c — the .dynsym reader of shim/core/elfsym.c on a real shared object and on
 * truncated and corrupted copies of it. Pure C, no JVM.
 *
 * The real object is the C library this test runs with (its link map names its file):
 * its table must list printf and malloc as defined global functions. Every damaged copy
 * lives in a buffer of exactly its length, so under ASan (make unit-san) a read one byte
 * past the end fails the run; each must come back -1 with a message that says what is
 * wrong, or, where the damage only touches a name, skip that symbol.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/elfsym.h"
#include "unit.h"

/* The ELF class the shim reads is its own build's: ELF64 on x86-64, ELF32 on i386. */
#if UINTPTR_MAX > 0xFFFFFFFFu
typedef Elf64_Ehdr Ehdr;
typedef Elf64_Shdr Shdr;
typedef Elf64_Sym Sym;
#define OTHER_CLASS ELFCLASS32
#else
typedef Elf32_Ehdr Ehdr;
typedef Elf32_Shdr Shdr;
typedef Elf32_Sym Sym;
#define OTHER_CLASS ELFCLASS64
#endif

struct seen {
    int n;
    size_t name_bytes;          /* strlen of every name: each must be readable */
    bool printf_fn, malloc_fn;
    int stop_after;             /* 0: never stop */
};

static bool on_sym(const struct elfsym *s, void *ctx)
{
    struct seen *z = ctx;
    z->n++;
    z->name_bytes += strlen(s->name);
    if (s->defined && s->type == STT_FUNC && s->bind == STB_GLOBAL) {
        z->printf_fn |= strcmp(s->name, "printf") == 0;
        z->malloc_fn |= strcmp(s->name, "malloc") == 0;
    }
    return z->stop_after == 0 || z->n < z->stop_after;
}

static unsigned char *lib;
static size_t lib_len;
static char err[512];

/* Scan a copy of lib[0..len) with the bytes edit() changes, in a buffer of exactly len. */
static int scan_copy(size_t len, void (*edit)(unsigned char *m, size_t len), struct seen *z)
{
    unsigned char *m = malloc(len ? len : 1);
    memcpy(m, lib, len);
    if (edit != NULL)
        edit(m, len);
    memset(z, 0, sizeof *z);
    err[0] = '\0';
    int n = elfsym_scan(m, len, on_sym, z, err, sizeof err);
    free(m);
    return n;
}

static Ehdr ehdr(const unsigned char *m)
{
    Ehdr e;
    memcpy(&e, m, sizeof e);
    return e;
}

/* Index of the first section of this type, or -1. */
static int section_of(const unsigned char *m, unsigned type)
{
    Ehdr e = ehdr(m);
    for (unsigned i = 0; i < e.e_shnum; i++) {
        Shdr s;
        memcpy(&s, m + e.e_shoff + i * sizeof s, sizeof s);
        if (s.sh_type == type)
            return (int)i;
    }
    return -1;
}

static Shdr *shdr_at(unsigned char *m, int i)
{
    return (Shdr *)(m + ehdr(m).e_shoff + (size_t)i * sizeof(Shdr));
}

/* Edits, one per kind of damage. Section headers of a real file are 8-aligned. */
static void bad_magic(unsigned char *m, size_t n) { (void)n; m[1] = 'X'; }
static void class32(unsigned char *m, size_t n) { (void)n; m[EI_CLASS] = OTHER_CLASS; }
static void big_endian(unsigned char *m, size_t n) { (void)n; m[EI_DATA] = ELFDATA2MSB; }
static void no_sections(unsigned char *m, size_t n) { (void)n; ((Ehdr *)m)->e_shoff = 0; }
static void shentsize(unsigned char *m, size_t n) { (void)n; ((Ehdr *)m)->e_shentsize = sizeof(Shdr) == 40 ? 64 : 40; }
static void shoff_wraps(unsigned char *m, size_t n) { (void)n; ((Ehdr *)m)->e_shoff = (__typeof__(((Ehdr *)0)->e_shoff))(UINTPTR_MAX - 8); }
static void shnum_big(unsigned char *m, size_t n) { (void)n; ((Ehdr *)m)->e_shnum = 0xfff0; }
static void sym_off_big(unsigned char *m, size_t n) { shdr_at(m, section_of(m, SHT_DYNSYM))->sh_offset = n; }
static void sym_size_wraps(unsigned char *m, size_t n) { (void)n; shdr_at(m, section_of(m, SHT_DYNSYM))->sh_size = (__typeof__(((Shdr *)0)->sh_size))(UINTPTR_MAX - 23); }
static void sym_entsize(unsigned char *m, size_t n) { (void)n; shdr_at(m, section_of(m, SHT_DYNSYM))->sh_entsize = 0; }
static void sym_size_odd(unsigned char *m, size_t n) { (void)n; shdr_at(m, section_of(m, SHT_DYNSYM))->sh_size -= 1; }
static void link_big(unsigned char *m, size_t n) { (void)n; shdr_at(m, section_of(m, SHT_DYNSYM))->sh_link = 0xffff; }
static void link_self(unsigned char *m, size_t n)
{
    (void)n;
    int d = section_of(m, SHT_DYNSYM);
    shdr_at(m, d)->sh_link = (unsigned)d;
}
static void str_size_big(unsigned char *m, size_t n)
{
    Shdr *d = shdr_at(m, section_of(m, SHT_DYNSYM));
    shdr_at(m, (int)d->sh_link)->sh_size = n;
}
static void str_unterminated(unsigned char *m, size_t n)
{
    (void)n;
    Shdr *d = shdr_at(m, section_of(m, SHT_DYNSYM));
    Shdr *s = shdr_at(m, (int)d->sh_link);
    m[s->sh_offset + s->sh_size - 1] = 'x';
}
/* Every symbol's name offset past the string table: each is skipped, none read. */
static void names_wild(unsigned char *m, size_t n)
{
    (void)n;
    Shdr *d = shdr_at(m, section_of(m, SHT_DYNSYM));
    for (size_t i = 0; i < d->sh_size / sizeof(Sym); i++) {
        Sym *s = (Sym *)(m + d->sh_offset) + i;
        s->st_name = 0xfffffff0u;
    }
}

static void expect_error(const char *what, size_t len, void (*edit)(unsigned char *, size_t),
                         const char *needle)
{
    struct seen z;
    int n = scan_copy(len, edit, &z);
    CHECK(n == -1, "%s: elfsym_scan = %d, expected -1", what, n);
    CHECK(strstr(err, needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what, err, needle);
    CHECK(z.n == 0, "%s: %d symbols passed before the error", what, z.n);
}

static char tmpdir[] = "/tmp/test_elfsym_XXXXXX";

static int each_file(const char *name, const unsigned char *m, size_t len, struct seen *z)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(m, 1, len, f) != len) {
        CHECK(0, "cannot write %s", path);
        if (f)
            fclose(f);
        return -2;
    }
    fclose(f);
    memset(z, 0, sizeof *z);
    err[0] = '\0';
    int n = elfsym_each(path, on_sym, z, err, sizeof err);
    unlink(path);
    return n;
}

int main(void)
{
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    struct link_map *lm = NULL;
    CHECK(libc != NULL && dlinfo(libc, RTLD_DI_LINKMAP, &lm) == 0 && lm != NULL &&
              lm->l_name != NULL && lm->l_name[0] == '/',
          "the C library's file");
    if (lm == NULL || lm->l_name == NULL || lm->l_name[0] != '/')
        return UNIT_END();
    const char *path = lm->l_name;

    /* The real library, from its file. */
    struct seen z = {0};
    int n = elfsym_each(path, on_sym, &z, err, sizeof err);
    CHECK(n > 100, "elfsym_each(%s) = %d (%s)", path, n, err);
    CHECK(n == z.n, "returned %d, passed %d", n, z.n);
    CHECK(z.printf_fn && z.malloc_fn, "%s: printf %d, malloc %d defined global functions",
          path, z.printf_fn, z.malloc_fn);

    FILE *f = fopen(path, "rb");
    CHECK(f != NULL, "fopen(%s)", path);
    if (f == NULL)
        return UNIT_END();
    fseek(f, 0, SEEK_END);
    lib_len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    lib = malloc(lib_len);
    CHECK(fread(lib, 1, lib_len, f) == lib_len, "read %s", path);
    fclose(f);

    /* The same from memory; and a callback that stops. */
    int whole = scan_copy(lib_len, NULL, &z);
    CHECK(whole == n, "elfsym_scan = %d, elfsym_each = %d", whole, n);
    CHECK(section_of(lib, SHT_DYNSYM) >= 0, "%s has a .dynsym", path);
    memset(&z, 0, sizeof z);
    z.stop_after = 3;
    CHECK_EQ_INT(elfsym_scan(lib, lib_len, on_sym, &z, err, sizeof err), 3);

    /* Truncated: the section headers sit at the end of the file. */
    expect_error("empty", 0, NULL, "too short");
    expect_error("half a header", sizeof(Ehdr) / 2, NULL, "too short");
    expect_error("header only", sizeof(Ehdr), NULL, "past the end");
    expect_error("half the file", lib_len / 2, NULL, "past the end");
    expect_error("one byte short", lib_len - 1, NULL, "past the end");

    /* Corrupted. */
    expect_error("bad magic", lib_len, bad_magic, "not an ELF file");
    expect_error("the other class", lib_len, class32, sizeof(void *) == 8 ? "not a 64-bit" : "not a 32-bit");
    expect_error("byte order", lib_len, big_endian, "byte order");
    expect_error("section header size", lib_len, shentsize, "section header size");
    expect_error("e_shoff wraps", lib_len, shoff_wraps, "past the end");
    expect_error("e_shnum too big", lib_len, shnum_big, "past the end");
    expect_error(".dynsym offset at the end", lib_len, sym_off_big, ".dynsym");
    expect_error(".dynsym size wraps", lib_len, sym_size_wraps, ".dynsym");
    expect_error(".dynsym entry size 0", lib_len, sym_entsize, "entry size");
    expect_error(".dynsym size not whole entries", lib_len, sym_size_odd, "entry size");
    expect_error(".dynsym link out of range", lib_len, link_big, "links to section");
    expect_error(".dynsym links to itself", lib_len, link_self, "not a string table");
    expect_error(".dynstr past the end", lib_len, str_size_big, ".dynstr");
    expect_error(".dynstr without NUL", lib_len, str_unterminated, "NUL");

    /* Damage that is no error. */
    CHECK_EQ_INT(scan_copy(lib_len, no_sections, &z), 0);
    CHECK_EQ_INT(scan_copy(lib_len, names_wild, &z), 0);
    CHECK_EQ_INT(z.n, 0);

    /* Random bytes over the headers and the table: any answer but a fault. */
    srand(29);
    int d = section_of(lib, SHT_DYNSYM);
    Shdr sym;
    memcpy(&sym, shdr_at(lib, d), sizeof sym);
    size_t zones[3][2] = {{0, sizeof(Ehdr)},
                          {ehdr(lib).e_shoff, ehdr(lib).e_shnum * sizeof(Shdr)},
                          {sym.sh_offset, sym.sh_size < 4096 ? sym.sh_size : 4096}};
    int survived = 0;
    for (int round = 0; round < 600; round++) {
        unsigned char *m = malloc(lib_len);
        memcpy(m, lib, lib_len);
        for (int k = 0; k < 4; k++) {
            size_t *zn = zones[rand() % 3];
            m[zn[0] + (size_t)rand() % zn[1]] = (unsigned char)rand();
        }
        memset(&z, 0, sizeof z);
        int r = elfsym_scan(m, lib_len, on_sym, &z, err, sizeof err);
        survived += r == -1 ? err[0] != '\0' : r == z.n;
        free(m);
    }
    CHECK_EQ_INT(survived, 600);

    /* Files: missing, empty, a directory, truncated. */
    CHECK(mkdtemp(tmpdir) != NULL, "mkdtemp");
    CHECK_EQ_INT(elfsym_each("/nonexistent/libnothing.so", on_sym, &z, err, sizeof err), -1);
    CHECK(strstr(err, "No such file") != NULL, "missing file: \"%s\"", err);
    CHECK_EQ_INT(elfsym_each(tmpdir, on_sym, &z, err, sizeof err), -1);
    CHECK(strstr(err, "not a regular file") != NULL, "directory: \"%s\"", err);
    CHECK_EQ_INT(each_file("empty.so", lib, 0, &z), -1);
    CHECK(strstr(err, "too short") != NULL, "empty file: \"%s\"", err);
    CHECK_EQ_INT(each_file("half.so", lib, lib_len / 2, &z), -1);
    CHECK(strstr(err, "past the end") != NULL, "half a file: \"%s\"", err);
    CHECK_EQ_INT(each_file("whole.so", lib, lib_len, &z), n);
    rmdir(tmpdir);

    free(lib);
    return UNIT_END();
}
