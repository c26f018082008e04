/*
 * Reads messages 1..N of a JetStream stream with nats.c (not outboxer's client) and prints them as hex, so
 * the test sees the exact bytes of the subject, the data and every header name and value.
 * Usage: nats_reader <url> <stream> <count>. Output per message: "M <subject>", "D <data hex>",
 * then "H <name hex> <value hex>" for each header value, then "E".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nats/nats.h>

static void hex(const char *bytes, int length) {
  for (int i = 0; i < length; i++) printf("%02x", (unsigned char)bytes[i]);
}

int main(int argc, char **argv) {
  natsConnection *nc = NULL;
  jsCtx *js = NULL;
  if (argc != 4) return 2;
  if (natsConnection_ConnectTo(&nc, argv[1]) != NATS_OK || natsConnection_JetStream(&js, nc, NULL) != NATS_OK) {
    fprintf(stderr, "connect: %s\n", nats_GetLastError(NULL));
    return 1;
  }
  int count = atoi(argv[3]);
  for (int seq = 1; seq <= count; seq++) {
    natsMsg *msg = NULL;
    jsErrCode jerr = 0;
    if (js_GetMsg(&msg, js, argv[2], (uint64_t)seq, NULL, &jerr) != NATS_OK) {
      fprintf(stderr, "get %d: %s (%d)\n", seq, nats_GetLastError(NULL), (int)jerr);
      return 1;
    }
    printf("M %s\nD ", natsMsg_GetSubject(msg));
    hex(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
    printf("\n");
    const char **keys = NULL;
    int keyCount = 0;
    if (natsMsgHeader_Keys(msg, &keys, &keyCount) == NATS_OK) {
      for (int k = 0; k < keyCount; k++) {
        const char **values = NULL;
        int valueCount = 0;
        if (natsMsgHeader_Values(msg, keys[k], &values, &valueCount) != NATS_OK) continue;
        for (int v = 0; v < valueCount; v++) {
          printf("H ");
          hex(keys[k], (int)strlen(keys[k]));
          printf(" ");
          hex(values[v], (int)strlen(values[v]));
          printf("\n");
        }
        free((void *)values);
      }
      free((void *)keys);
    }
    printf("E\n");
    natsMsg_Destroy(msg);
  }
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return 0;
}
