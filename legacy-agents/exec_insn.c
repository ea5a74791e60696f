/* exec_insn.c — a JDK 1.3-style JVMPI agent that records INSTRUCTION_START for one method.
 *
 * jvmpi.h, JVM_OnLoad, GetEnv, NotifyEvent, libc only. Enables CLASS_LOAD and
 * INSTRUCTION_START; learns the method id of ExecInsn.branchy(I)I from CLASS_LOAD and
 * prints every INSTRUCTION_START of it, in order, as
 *   exec_insn: i OFFSET if IS_TRUE | tswitch KEY LOW HI | lswitch CHOSEN TOTAL | - -
 * (the inner union is printed according to what the test expects at that offset: the agent
 * prints all three readings and the test picks). Counts the events of other methods.
 */
#include <jvmpi.h>

#include <stdio.h>
#include <string.h>

static JVMPI_Interface *jvmpi;
static JVMPI_RawMonitor lock;
static jmethodID target;
static long others, mine, before_target;

static void notify(JVMPI_Event *ev)
{
    switch (ev->event_type & ~JVMPI_REQUESTED_EVENT) {
    case JVMPI_EVENT_CLASS_LOAD:
        if (ev->u.class_load.class_name != NULL && !strcmp(ev->u.class_load.class_name, "ExecInsn")) {
            jint i;
            for (i = 0; i < ev->u.class_load.num_methods; i++)
                if (!strcmp(ev->u.class_load.methods[i].method_name, "branchy"))
                    target = ev->u.class_load.methods[i].method_id;
        }
        break;
    case JVMPI_EVENT_INSTRUCTION_START:
        jvmpi->RawMonitorEnter(lock);
        if (target != NULL && ev->u.instruction.method_id == target) {
            mine++;
            printf("exec_insn: i %d if %d tswitch %d %d %d lswitch %d %d\n",
                   (int)ev->u.instruction.offset, (int)ev->u.instruction.u.if_info.is_true,
                   (int)ev->u.instruction.u.tableswitch_info.key,
                   (int)ev->u.instruction.u.tableswitch_info.low,
                   (int)ev->u.instruction.u.tableswitch_info.hi,
                   (int)ev->u.instruction.u.lookupswitch_info.chosen_pair_index,
                   (int)ev->u.instruction.u.lookupswitch_info.pairs_total);
        } else {
            others++;
            if (target == NULL)
                before_target++;
        }
        jvmpi->RawMonitorExit(lock);
        break;
    case JVMPI_EVENT_JVM_SHUT_DOWN:
        printf("exec_insn: totals branchy=%ld others=%ld\n", mine, others);
        fflush(stdout);
        break;
    }
}

JNIEXPORT jint JNICALL JVM_OnLoad(JavaVM *jvm, char *options, void *reserved)
{
    (void)options; (void)reserved;
    if ((*jvm)->GetEnv(jvm, (void **)&jvmpi, JVMPI_VERSION_1) != JNI_OK)
        return JNI_ERR;
    jvmpi->NotifyEvent = notify;
    setvbuf(stdout, NULL, _IOLBF, 0); /* whole lines: the program writes to the same stdout */
    lock = jvmpi->RawMonitorCreate("_exec_insn");
    jvmpi->EnableEvent(JVMPI_EVENT_CLASS_LOAD, NULL);
    jvmpi->EnableEvent(JVMPI_EVENT_JVM_SHUT_DOWN, NULL);
    printf("exec_insn: enable INSTRUCTION_START rc=%d\n",
           (int)jvmpi->EnableEvent(JVMPI_EVENT_INSTRUCTION_START, NULL));
    fflush(stdout);
    return JNI_OK;
}
