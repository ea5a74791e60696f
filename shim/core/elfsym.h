/* elfsym.h — the dynamic symbol table (.dynsym) of an ELF file of this build's class (ELF64
 * on x86-64, ELF32 on i386), read from the file.
 *
 * Two parts of the shim read an agent library's exported names before or after dlopen:
 * face/loader.c (names that collide with the process's, which decide RTLD_DEEPBIND) and
 * classes/agent_natives.c (the agent's own Java_* natives). Both go through this one
 * reader, which trusts nothing in the file: every offset and size is checked against the
 * file's size without overflow, and the header, section and entry sizes must be the class's.
 */
#ifndef JVMPISHIM_ELFSYM_H
#define JVMPISHIM_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>

/* One .dynsym entry, as the callback sees it. */
struct elfsym {
    const char *name;           /* NUL-terminated, inside the file's string table */
    unsigned char bind;         /* STB_* */
    unsigned char type;         /* STT_* */
    unsigned char visibility;   /* STV_* */
    bool defined;               /* st_shndx != SHN_UNDEF */
};

/* Called per symbol, in table order (the null entry 0 is skipped, and so is an entry whose
 * name lies outside the string table); return false to stop. */
typedef bool (*elfsym_fn)(const struct elfsym *sym, void *ctx);

/* The .dynsym of the ELF64 image m[0..len): the number of entries passed to fn, 0 for an
 * image without section headers or without .dynsym; -1 for an image that is not a
 * well-formed ELF64 object of this machine's byte order, with the reason in err. */
int elfsym_scan(const unsigned char *m, size_t len, elfsym_fn fn, void *ctx, char *err,
                size_t errlen);
/* The same for the file at path (mapped read-only for the call); -1 also when it cannot
 * be opened or mapped, with the reason in err. */
int elfsym_each(const char *path, elfsym_fn fn, void *ctx, char *err, size_t errlen);

/* The architecture of the ELF file at path, as "i386 (ELF32)" or "x86-64 (ELF64)" in out,
 * and *foreign set when it is not this shim's (so dlopen could not load it). -1 if the file
 * cannot be read or is not ELF. */
int elfsym_arch(const char *path, char *out, size_t outlen, bool *foreign);

#endif
