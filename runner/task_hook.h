/* task_hook.h - the payload of a hook task (task_hook.c). */
#ifndef GF_TASK_HOOK_H
#define GF_TASK_HOOK_H

typedef struct gf_hook_task {
  int hook; /* index into wf->hooks */
} gf_hook_task;

#endif
