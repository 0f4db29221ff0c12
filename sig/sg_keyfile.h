/*
 * sg_keyfile.h: loading a key ring from a JWK Set file or a directory of
 * them (clf_keyring_load in classify.h states the rules). Reads with
 * open/read and allocates with malloc while loading (the ring itself
 * with its own allocator); not for a request's path.
 */
#ifndef SG_KEYFILE_H
#define SG_KEYFILE_H

#include "sg_keys.h"

/* The largest key-set file read. */
#define SG_KEYFILE_MAX_BYTES (1 << 20)

typedef enum sg_file_status {
    SG_FILE_OK = 0,
    SG_FILE_NOMEM = -1,
    SG_FILE_FORMAT = -2, /* a malformed set, or a directory without one */
    SG_FILE_IO = -3      /* cannot open or read, not a regular file, too large */
} sg_file_status;

/* Adds the keys of path (a file, or the *.json files of a directory) to
 * r: all of them, or on failure none, with err saying "PATH: problem". */
sg_file_status sg_keyring_load_path(sg_keyring *r, const char *path, char *err, size_t errlen);

#endif
