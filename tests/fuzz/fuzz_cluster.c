/* fuzz_cluster.c: libFuzzer target for the cluster bus's message check
 * (cluster_msg_valid in src/cluster_wire.c), the gate every message from
 * the network passes before the bus reads any field of it.
 *
 * The input is taken as one message whose totlen is patched to the input's
 * length (the link reader only hands over whole messages of the length
 * they declare).  When the check accepts it, the target walks it as the
 * handlers do (the gossip entries, each extension by its length, FAIL's
 * name, UPDATE's bitmap, PUBLISH's two strings, MODULE's payload) on a copy of exactly the
 * accepted size, so any read past the end is an ASan report.  Built and
 * run by `make fuzz`; nothing reaches a socket or the disk. */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_bus.h"
#include "cluster_msg.h"

static volatile uint8_t sink;

static void touch(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) sink ^= p[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 8 || size > CMSG_MAX_LEN) return 0;
    uint8_t *buf = malloc(size);
    memcpy(buf, data, size);
    uint32_t totlen = htonl((uint32_t)size);
    memcpy(buf + 4, &totlen, 4);
    if (cluster_msg_valid(buf, size)) {
        const cmsg_header_t *h = (const cmsg_header_t *)buf;
        const uint8_t *d = buf + CMSG_HEADER_LEN;
        touch(buf, CMSG_HEADER_LEN);
        int type = ntohs(h->type);
        if (type == CMSG_PING || type == CMSG_PONG || type == CMSG_MEET) {
            size_t g = (size_t)ntohs(h->count) * sizeof(cmsg_gossip_t);
            touch(d, g);
            const uint8_t *p = d + g;
            unsigned n = (h->mflags[0] & CMSG_FLAG0_EXT_DATA) ? ntohs(h->extensions) : 0;
            for (unsigned i = 0; i < n; i++) {
                uint32_t len;
                memcpy(&len, p, 4);
                touch(p, ntohl(len));
                p += ntohl(len);
            }
        } else if (type == CMSG_FAIL) {
            touch(d, CLUSTER_NAMELEN);
        } else if (type == CMSG_UPDATE) {
            touch(d, sizeof(cmsg_update_t));
        } else if (type == CMSG_PUBLISH || type == CMSG_PUBLISHSHARD) {
            uint32_t cl, ml;
            memcpy(&cl, d, 4);
            memcpy(&ml, d + 4, 4);
            touch(d + 8, (size_t)ntohl(cl) + ntohl(ml));
        } else if (type == CMSG_MODULE) {
            uint32_t len;
            memcpy(&len, d + 8, 4);
            touch(d, 13 + (size_t)ntohl(len));
        }
    }
    free(buf);
    return 0;
}
