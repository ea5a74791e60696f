/* classfile.h — a class-file rewriter that injects calls to static native "hook" methods.
 *
 * cf_instrument() takes the bytes of one class file, as ClassFileLoadHook sees them, and
 * returns a rewritten copy in which chosen methods call static methods of a hook class:
 * on entry and before every exit (method probes, with a catch-all handler so an exception
 * also posts the exit), before every bytecode instruction (instruction probes, with the
 * operands a conditional branch or switch will test), and around native methods (a
 * non-native wrapper of the same name calls the native, renamed with the JVMTI native
 * method prefix). Branches, switches, the exception table, the line and local variable
 * tables and the StackMapTable are relocated; branches that no longer reach are widened.
 *
 * Pure C, no JVM headers, no global state (thread-safe), malloc-based. Any input is safe:
 * malformed bytes give an error message, never a crash or an unchecked read.
 */
#ifndef JVMPISHIM_CLASSFILE_H
#define JVMPISHIM_CLASSFILE_H

#include <stddef.h>
#include <stdint.h>

/* cf_probe_spec.flags
 * Method probes: the entry probe runs before the first instruction, outside every handler
 * (if the hook call itself fails, e.g. StackOverflowError, neither entry nor exit is seen).
 * The exit probe runs before each return instruction and in a catch-all handler (exit, then
 * athrow) placed after the code and appended last to the exception table, so the method's
 * own handlers keep priority. Gaps, by the verifier's rules: in a constructor the catch-all
 * covers only code after the invokespecial that initializes `this` (a handler may not cover
 * code where `this` is uninitialized), so an exception thrown before super(...)/this(...)
 * has returned (while computing its arguments, or by the superclass constructor) leaves the
 * constructor entered without exit; in java/lang/Object.<init> the return itself is outside
 * the catch-all (HotSpot's C2 crashes on a handler over it). */
#define CF_METHOD_PROBES 0x1u /* enter/enterObj at entry, exit before returns and on throw */
#define CF_INSN_PROBES   0x2u /* insn* before every original instruction */
/* Instruction probes: branch and switch targets, exception ranges and handlers, frames and
 * line/variable ranges name the probe, so the probe runs whenever its instruction does.
 * Ids and offsets are pushed with iconst/bipush/sipush, ids beyond 16 bits with ldc/ldc_w of
 * an Integer constant, offsets above 32767 as sipush 32767; sipush r; iadd (no constant per
 * offset). max_stack grows by 5 (1 for method probes alone). */
#define CF_WRAP_NATIVES  0x4u /* native foo -> native PREFIXfoo + non-native wrapper foo */
/* For tests: send every method with an id through the whole rewriting path (decode,
 * relocate, re-encode the StackMapTable and tables) without adding any probe. The result
 * equals the input except for the StackMapTable's choice of frame encodings and the
 * dropped type annotations on code (see cf_instrument). */
#define CF_REWRITE_ONLY  0x100u

/* The hook methods: public static (native) methods of spec->hook_class, with these fixed
 * names and descriptors (cf_hook_name / cf_hook_desc). mid is the method id returned by
 * spec->method_id, bci the ORIGINAL bytecode offset of the instruction about to run. */
enum cf_hook {
    CF_HOOK_ENTER,     /* enter(I)V                      (mid): static methods, <clinit>, and
                        * constructors without one super(...)/this(...) call */
    CF_HOOK_ENTER_OBJ, /* enterObj(Ljava/lang/Object;I)V (this, mid): other instance methods,
                        * and java.lang.Object.<init>, whose `this` is initialized */
    CF_HOOK_EXIT,      /* exit(I)V                       (mid): before each return; on a throw */
    CF_HOOK_INSN,      /* insn(II)V                      (mid, bci): ordinary instructions */
    CF_HOOK_INSN_INT,  /* insnInt(III)V                  (value, mid, bci): ifeq..ifle, switches */
    CF_HOOK_INSN_INT2, /* insnInt2(IIII)V                (v1, v2, mid, bci): if_icmpeq..if_icmple */
    CF_HOOK_INSN_OBJ,  /* insnObj(Ljava/lang/Object;II)V (ref, mid, bci): ifnull, ifnonnull */
    CF_HOOK_INSN_OBJ2, /* insnObj2(Ljava/lang/Object;Ljava/lang/Object;II)V: if_acmpeq/ne */
    CF_HOOK_EXIT_THROW, /* exitThrow(I)V                 (mid): a constructor left by a throw */
    /* Constructors with one invokespecial that initializes `this` (the super(...)/this(...)
     * call), whose `this` cannot be passed on entry: enterCtor on entry, superCall just
     * before that invokespecial, ctorReady with `this` just after it returns. */
    CF_HOOK_ENTER_CTOR, /* enterCtor(I)V                 (mid) */
    CF_HOOK_SUPER_CALL, /* superCall(I)V                 (mid) */
    CF_HOOK_CTOR_READY, /* ctorReady(Ljava/lang/Object;I)V (this, mid) */
    CF_HOOK_COUNT
};
const char *cf_hook_name(enum cf_hook h);
const char *cf_hook_desc(enum cf_hook h);

struct cf_probe_spec {
    /* Internal name of the class holding the hooks, e.g. "java/lang/JvmpiShimHook". That
     * class itself, and any class that already references it, is returned unchanged (1). */
    const char *hook_class;
    unsigned flags;            /* CF_METHOD_PROBES | CF_INSN_PROBES | CF_WRAP_NATIVES */
    const char *native_prefix; /* for CF_WRAP_NATIVES, as given to SetNativeMethodPrefix */
    /* Called once per method of the input class, in class-file order (index 0, 1, ...),
     * abstract ones included. Returns the id the probes pass for this method, or -1 to
     * leave the method alone. Required. */
    int32_t (*method_id)(void *ctx, int index, const char *name, const char *desc,
                         uint16_t access);
    /* Optional. Called after a successful rewrite (return 0), once per method that got
     * probes or a wrapper, in class-file order, with its ORIGINAL bytecode (code_len 0 for
     * a wrapped native). The pointer is into the input buffer: copy what you keep. After
     * RetransformClasses, JVMTI GetBytecodes returns the rewritten code, so this is how to
     * keep the original for cf_branch_outcome(). */
    void (*method_done)(void *ctx, int index, int32_t id, const uint8_t *code,
                        uint32_t code_len);
    /* Optional. If set, a method that cannot be rewritten (code too large after rewriting,
     * malformed code) is left unchanged and reported here, and the rest of the class is
     * still rewritten. If NULL, such a method makes cf_instrument() fail with the same
     * message. A native that must not be wrapped is left unchanged in either case, and
     * reported here if set: "intrinsic native" (@IntrinsicCandidate: the VM binds some of
     * them by name, a wrapper would lose the intrinsic), "caller-sensitive native" (a
     * wrapper frame would change the caller it sees), "signature-polymorphic method"
     * (MethodHandle/VarHandle), "native method in an interface", or a name like <clinit>.
     * The messages are fixed strings or start with the reason, never with the name. */
    void (*method_skipped)(void *ctx, int index, const char *name, const char *desc,
                           const char *why);
    /* Optional. Called after a successful rewrite, after method_done, once per constructor
     * that got probes and has exactly one invokespecial that initializes `this` (the
     * super(...)/this(...) call), with the REWRITTEN bytecode offset of that instruction.
     * No handler covers it (the verifier allows none that could return), so a constructor
     * whose super(...)/this(...) call throws runs no probe of its own: the called
     * constructor's exitThrow runs, and a frame of this method standing at this offset is
     * then known to be left by the same exception. */
    void (*init_call)(void *ctx, int index, int32_t id, uint32_t new_bci);
    void *ctx;
};

/* Rewrite one class file. Returns 0 with *out (malloc'd, free() it) and *out_len set;
 * 1 if nothing needed changing (no output); -1 on error, with a message in err (always
 * NUL-terminated when errlen > 0), e.g. "method foo(I)V: code too large after rewriting
 * (70123 bytes)". Class files of major version 45 to 69 are read; a later version is
 * refused.
 * In a rewritten method, RuntimeVisible/InvisibleTypeAnnotations of the Code attribute (they
 * name bytecode offsets; HotSpot does not read them) are dropped; other unknown attributes
 * are kept as they are. A StackMapTable in a class file older than 50 is dropped. */
int cf_instrument(const uint8_t *in, size_t in_len, const struct cf_probe_spec *spec,
                  uint8_t **out, size_t *out_len, char *err, size_t errlen);

/* What an instruction probe's values mean, computed from the ORIGINAL bytecode of the
 * method at bci (as given to method_done). v1/v2 are the hook's int arguments: for
 * insnInt the tested value or switch key in v1; for insnInt2 the two operands; for the
 * reference forms the caller passes v1 = 1 if the reference is null (ifnull/ifnonnull) or
 * if both references are the same object (if_acmpeq/if_acmpne), else 0. */
enum cf_branch_kind { CF_BR_NONE, CF_BR_IF, CF_BR_TABLESWITCH, CF_BR_LOOKUPSWITCH };
struct cf_branch {
    enum cf_branch_kind kind;
    int taken;                 /* CF_BR_IF: 1 if the branch is taken */
    int32_t key, low, high;    /* CF_BR_TABLESWITCH: key (= v1) and the table's bounds */
    int32_t chosen_pair_index; /* CF_BR_LOOKUPSWITCH: index of the matching pair, or */
    int32_t pairs_total;       /*   pairs_total when the default is taken */
    uint32_t next_bci;         /* the instruction that runs next (branches and switches) */
};
/* Returns 0 and fills *out (kind CF_BR_NONE for an instruction that is not a conditional
 * branch or switch), or -1 if bci is outside code, the byte there is not an opcode, or a
 * branch or switch there is truncated. bci must be an instruction's offset (as the probes
 * pass it): this is not checked. */
int cf_branch_outcome(const uint8_t *code, uint32_t code_len, uint32_t bci, int32_t v1,
                      int32_t v2, struct cf_branch *out);

/* Build a hook class: public final class NAME with every hook of enum cf_hook as a public
 * static native method, class-file version 52 (no code, so no StackMapTable). An agent can
 * define it with JNI DefineClass and bind the natives with RegisterNatives. Returns 0 with
 * *out malloc'd, -1 (message in err) for a bad name. */
int cf_make_hook_class(const char *name, uint8_t **out, size_t *out_len, char *err,
                       size_t errlen);

#endif
