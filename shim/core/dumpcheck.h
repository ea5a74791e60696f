/* dumpcheck.h — decoder and validator of JVMPI dump buffers (dumpcheck.c). Pure C: used
 * by the shim (checkdumps option), by tests/tools/jvmpidump and by the unit tests. */
#ifndef JVMPISHIM_DUMPCHECK_H
#define JVMPISHIM_DUMPCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a CLASS_DUMP's length depends on and JVMPI does not write: the number of direct
 * interfaces and the types of the statics (signature chars, 'L' for references), both
 * known to an agent from CLASS_LOAD. */
struct dump_class_info {
    int num_interfaces;
    int n_statics;
    const char *static_types;
};
typedef bool (*dump_class_lookup)(void *ctx, uint64_t class_id, struct dump_class_info *out);

/* One decoded record. Fields not used by a record type are 0. Values are as in the dump:
 * ids native (of the dump's id size), numbers already converted from big-endian. */
struct dump_record {
    size_t offset;
    int type;                   /* record type (root/dump kind, or level-0 object type) */
    uint64_t id, id2;           /* object; second id (thread env, class, element class...) */
    uint32_t u4;                /* frame number, instance size, length, entry count ... */
    const unsigned char *data;  /* INSTANCE_DUMP values / PRIM_ARRAY elements / statics */
    size_t data_len;
    int elem_type;              /* PRIM_ARRAY_DUMP */
    uint32_t n1, n2;            /* monitor: waiting to enter / to be notified */
    const unsigned char *list1, *list2;     /* their JNIEnv* arrays (native) */
    const char *name;           /* raw monitor name pointer (native) */
};
typedef void (*dump_record_fn)(void *ctx, const struct dump_record *r);

/* Walk a heap dump (level 0..2) or an object dump (single record, level 2) to its end.
 * Returns 0 when every byte was consumed by well-formed records, else -1 with the offset
 * of the first bad record in *bad and a reason in msg. lookup may be NULL if the dump has
 * no CLASS_DUMP records. */
int dump_walk_heap(const unsigned char *p, size_t len, int level, dump_class_lookup lookup,
                   void *lookup_ctx, dump_record_fn fn, void *fn_ctx, size_t *bad, char *msg,
                   size_t msglen);
int dump_walk_monitor(const unsigned char *p, size_t len, dump_record_fn fn, void *fn_ctx,
                      size_t *bad, char *msg, size_t msglen);
/* The same for a dump whose ids and pointer-sized fields are id_size bytes (4: written on
 * i386, 8: on x86-64), whatever this reader's own pointers are. */
int dump_walk_heap_w(const unsigned char *p, size_t len, int id_size, int level,
                     dump_class_lookup lookup, void *lookup_ctx, dump_record_fn fn, void *fn_ctx,
                     size_t *bad, char *msg, size_t msglen);
int dump_walk_monitor_w(const unsigned char *p, size_t len, int id_size, dump_record_fn fn,
                        void *fn_ctx, size_t *bad, char *msg, size_t msglen);
int dump_type_size_w(int type_code, int id_size);
int dump_sig_size_w(char c, int id_size);
/* Size in the dump of a value of JVMPI type code t (4..11) or signature char c. */
int dump_type_size(int type_code);
int dump_sig_size(char c);

#endif
