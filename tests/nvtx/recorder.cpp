// An NVTX injection library for tests: loaded by NVTX through
// NVTX_INJECTION64_PATH, it records every domain push, pop and mark (with the
// domain's name, the message -- registered strings resolved --, the category
// and the payload) as one tab-separated line in the file named by
// HEAPBENCH_NVTX_LOG.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace {

std::FILE* g_log = nullptr;
std::mutex g_mutex;

// Domains and registered strings are handed back to NVTX as pointers to these.
struct Domain {
  std::string name;
};
struct Registered {
  std::string text;
};

const char* domain_name(nvtxDomainHandle_t d) { return d ? reinterpret_cast<Domain*>(d)->name.c_str() : "(default)"; }

std::string message_of(const nvtxEventAttributes_t* a) {
  if (a == nullptr) return "";
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii ? a->message.ascii : "";
    case NVTX_MESSAGE_TYPE_REGISTERED: return reinterpret_cast<Registered*>(a->message.registered)->text;
    default: return "(unsupported message type)";
  }
}

long long payload_of(const nvtxEventAttributes_t* a) {
  if (a == nullptr) return 0;
  switch (a->payloadType) {
    case NVTX_PAYLOAD_TYPE_INT64: return a->payload.llValue;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: return static_cast<long long>(a->payload.ullValue);
    case NVTX_PAYLOAD_TYPE_INT32: return a->payload.iValue;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: return a->payload.uiValue;
    default: return 0;
  }
}

void record(const char* kind, nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_log) return;
  std::fprintf(g_log, "%s\t%s\t%u\t%lld\t%s\n", kind, domain_name(d), a ? a->category : 0u, payload_of(a),
               message_of(a).c_str());
  std::fflush(g_log);
}

nvtxDomainHandle_t NVTX_API domain_create(const char* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(new Domain{name ? name : ""});
}
void NVTX_API domain_destroy(nvtxDomainHandle_t) {}
nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t, const char* s) {
  return reinterpret_cast<nvtxStringHandle_t>(new Registered{s ? s : ""});
}
void NVTX_API name_category(nvtxDomainHandle_t d, uint32_t id, const char* name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_log) std::fprintf(g_log, "category\t%s\t%u\t0\t%s\n", domain_name(d), id, name ? name : "");
}
int NVTX_API push(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  record("push", d, a);
  return 0;
}
int NVTX_API pop(nvtxDomainHandle_t d) {
  record("pop", d, nullptr);
  return 0;
}
void NVTX_API mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) { record("mark", d, a); }

}  // namespace

extern "C" NVTX_DYNAMIC_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const char* path = std::getenv("HEAPBENCH_NVTX_LOG");
  if (path == nullptr) return 0;
  g_log = std::fopen(path, "w");
  if (g_log == nullptr) return 0;
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size)) return 0;
  auto set = [&](unsigned id, auto fn) {
    if (id <= size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
  };
  set(NVTX_CBID_CORE2_DomainCreateA, &domain_create);
  set(NVTX_CBID_CORE2_DomainDestroy, &domain_destroy);
  set(NVTX_CBID_CORE2_DomainRegisterStringA, &register_string);
  set(NVTX_CBID_CORE2_DomainNameCategoryA, &name_category);
  set(NVTX_CBID_CORE2_DomainRangePushEx, &push);
  set(NVTX_CBID_CORE2_DomainRangePop, &pop);
  set(NVTX_CBID_CORE2_DomainMarkEx, &mark);
  return 1;
}
