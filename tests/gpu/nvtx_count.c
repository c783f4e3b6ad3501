/* nvtx_count.c - an NVTX injection library that counts ranges, to check
 * gflow's NVTX ranges on a GPU machine without Nsight Systems:
 *
 *   NVTX_INJECTION64_PATH=$PWD/.device/bin/libnvtx_count.so gflow run ...
 *
 * NVTX (header-only, in the program) loads the library named by
 * NVTX_INJECTION64_PATH at its first call and hands it its function tables;
 * this one fills in domain creation, string registration, range push and pop.
 * At exit it prints to stderr, per domain, the ranges pushed per registered
 * message and the first and last payload (gflow's: the step), and how many
 * pushes had no pop or a message that was not registered:
 *
 *   nvtx_count: domain gflow: step 640 ranges (payload 0..639)
 *   nvtx_count: domain gflow: snapshot 637 ranges (payload 2..638)
 *   nvtx_count: 0 unbalanced, 0 unregistered
 */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAMES 256

typedef struct name {
  char domain[64], text[128];
  long long count, first, last;
} name;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static name names[MAX_NAMES];
static int nnames;
static char domains[MAX_NAMES][64];
static int ndomains;
static long long depth, unregistered;

static nvtxDomainHandle_t create_domain(const char *text) {
  pthread_mutex_lock(&lock);
  int d = ndomains < MAX_NAMES ? ndomains++ : MAX_NAMES - 1;
  snprintf(domains[d], sizeof domains[d], "%s", text);
  pthread_mutex_unlock(&lock);
  return (nvtxDomainHandle_t)(domains[d]); /* a handle is opaque to NVTX */
}

static nvtxStringHandle_t register_string(nvtxDomainHandle_t domain, const char *text) {
  pthread_mutex_lock(&lock);
  name *n = nnames < MAX_NAMES ? &names[nnames++] : NULL;
  if (n) {
    snprintf(n->domain, sizeof n->domain, "%s", domain ? (const char *)domain : "(default)");
    snprintf(n->text, sizeof n->text, "%s", text);
    n->first = -1;
  }
  pthread_mutex_unlock(&lock);
  return (nvtxStringHandle_t)n;
}

static int range_push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *a) {
  (void)domain;
  pthread_mutex_lock(&lock);
  depth++;
  name *n =
      a && a->messageType == NVTX_MESSAGE_TYPE_REGISTERED ? (name *)a->message.registered : NULL;
  if (!n) {
    unregistered++;
  } else {
    long long payload = a->payloadType == NVTX_PAYLOAD_TYPE_INT64 ? a->payload.llValue : -1;
    if (n->count++ == 0) n->first = payload;
    n->last = payload;
  }
  pthread_mutex_unlock(&lock);
  return 0;
}

static int range_pop(nvtxDomainHandle_t domain) {
  (void)domain;
  pthread_mutex_lock(&lock);
  depth--;
  pthread_mutex_unlock(&lock);
  return 0;
}

static void report(void) {
  for (int i = 0; i < nnames; i++)
    fprintf(stderr, "nvtx_count: domain %s: %s %lld ranges (payload %lld..%lld)\n", names[i].domain,
            names[i].text, names[i].count, names[i].first, names[i].last);
  fprintf(stderr, "nvtx_count: %lld unbalanced, %lld unregistered\n", depth, unregistered);
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const NvtxExportTableCallbacks *callbacks = get_export_table(NVTX_ETID_CALLBACKS);
  NvtxFunctionTable table = NULL;
  unsigned int size = 0;
  if (!callbacks || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) ||
      size <= NVTX_CBID_CORE2_DomainCreateA)
    return 0;
  *table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)create_domain;
  *table[NVTX_CBID_CORE2_DomainRegisterStringA] = (NvtxFunctionPointer)register_string;
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)range_push;
  *table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)range_pop;
  atexit(report);
  return 1;
}
