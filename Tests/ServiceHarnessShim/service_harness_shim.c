#define _GNU_SOURCE
#include "service_harness_shim.h"

#include <fcntl.h>
#include <unistd.h>

int harness_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

int harness_pipe_cloexec(int descriptors[2]) { return pipe2(descriptors, O_CLOEXEC); }
