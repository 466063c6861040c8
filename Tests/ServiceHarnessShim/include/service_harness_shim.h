/*
 * The glibc functions ServiceHarness's ChildProcess needs that glibc declares only under
 * _GNU_SOURCE, which Swift's Glibc module does not define. Every symbol is prefixed harness_.
 */
#ifndef SERVICE_HARNESS_SHIM_H
#define SERVICE_HARNESS_SHIM_H

#include <spawn.h>

/* posix_spawn_file_actions_addclosefrom_np (glibc 2.34) */
int harness_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from);

/* pipe2(descriptors, O_CLOEXEC) */
int harness_pipe_cloexec(int descriptors[2]);

#endif
