// CUPTI activity tracing through dlopen/dlsym. Compiled against the CUPTI headers only.
#include "cupti_timing.hpp"

#include <dlfcn.h>
#include <glob.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <cupti.h>

#include "cuda_util.hpp"

namespace runner::cupti {
namespace {

struct Api {
    decltype(&cuptiGetVersion) GetVersion = nullptr;
    decltype(&cuptiGetResultString) GetResultString = nullptr;
    decltype(&cuptiActivityRegisterCallbacks) RegisterCallbacks = nullptr;
    decltype(&cuptiActivityRegisterTimestampCallback) RegisterTimestampCallback = nullptr;  // optional
    decltype(&cuptiActivityEnable) Enable = nullptr;
    decltype(&cuptiActivityDisable) Disable = nullptr;
    decltype(&cuptiActivityFlushAll) FlushAll = nullptr;
    decltype(&cuptiActivityGetNextRecord) GetNextRecord = nullptr;
    decltype(&cuptiActivityGetNumDroppedRecords) GetNumDroppedRecords = nullptr;
    decltype(&cuptiActivityPushExternalCorrelationId) PushExternalCorrelationId = nullptr;
    decltype(&cuptiActivityPopExternalCorrelationId) PopExternalCorrelationId = nullptr;
    decltype(&cuptiGetTimestamp) GetTimestamp = nullptr;
    decltype(&cuptiGetGraphNodeId) GetGraphNodeId = nullptr;  // optional: graph nodes with dependencies
    decltype(&cuptiSubscribe) Subscribe = nullptr;
    decltype(&cuptiEnableCallback) EnableCallback = nullptr;
};

Api api;
void* handle = nullptr;
std::string lib_path;
uint32_t lib_version = 0;
bool steady_ts = false;
bool runtime_on = false;
bool enabled = false;

struct Act {
    uint32_t corr;
    uint64_t start, end;
    uint64_t node;  // graphNodeId (0 outside graphs)
};
struct Ext {
    uint32_t corr;
    uint64_t ext;
};
std::mutex mu;
std::vector<Act> acts;
std::vector<Ext> exts;
uint64_t dropped = 0;
bool node_ids = false;
std::mutex clone_mu;
std::unordered_map<uint64_t, uint64_t> original_of;  // cloned node id -> the id of the node it was cloned from
CUpti_SubscriberHandle subscriber = nullptr;

void CUPTIAPI resource_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
    if (domain != CUPTI_CB_DOMAIN_RESOURCE || cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED || !data) return;
    const auto* rd = static_cast<const CUpti_ResourceData*>(data);
    const auto* gd = static_cast<const CUpti_GraphData*>(rd->resourceDescriptor);
    if (!gd || !gd->node || !gd->originalNode) return;
    uint64_t clone = 0, orig = 0;
    if (api.GetGraphNodeId(gd->node, &clone) != CUPTI_SUCCESS || api.GetGraphNodeId(gd->originalNode, &orig) != CUPTI_SUCCESS) return;
    std::lock_guard<std::mutex> lock(clone_mu);
    original_of[clone] = orig;
}

constexpr size_t kBufferBytes = 8u << 20;

const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                     CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

std::string result_string(CUptiResult r) {
    const char* s = nullptr;
    if (api.GetResultString && api.GetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
    return "CUPTI error " + std::to_string(int(r));
}

uint64_t CUPTIAPI steady_timestamp() { return uint64_t(steady_ns()); }

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t /*size*/, size_t valid) {
    std::vector<Act> a;
    std::vector<Ext> e;
    CUpti_Activity* rec = nullptr;
    while (valid && api.GetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        switch (rec->kind) {
            case CUPTI_ACTIVITY_KIND_KERNEL:
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
                auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
                a.push_back({k->correlationId, k->start, k->end, k->graphNodeId});
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMCPY: {
                auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
                a.push_back({m->correlationId, m->start, m->end, m->graphNodeId});
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMSET: {
                auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
                a.push_back({m->correlationId, m->start, m->end, m->graphNodeId});
                break;
            }
            case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
                auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
                if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) e.push_back({x->correlationId, x->externalId});
                break;
            }
            default: break;
        }
    }
    size_t d = 0;
    if (api.GetNumDroppedRecords && api.GetNumDroppedRecords(ctx, stream_id, &d) != CUPTI_SUCCESS) d = 0;
    std::free(buffer);
    std::lock_guard<std::mutex> lock(mu);
    acts.insert(acts.end(), a.begin(), a.end());
    exts.insert(exts.end(), e.begin(), e.end());
    dropped += d;
}

template <class F>
bool sym(F& f, const char* name, std::string& why) {
    f = reinterpret_cast<F>(dlsym(handle, name));
    if (!f) why = std::string("libcupti lacks ") + name;
    return f != nullptr;
}

std::vector<std::string> candidates(const std::string& hint) {
    std::vector<std::string> c;
    if (!hint.empty()) return {hint};
    if (const char* env = std::getenv("HETSIM_CUPTI_LIB")) c.push_back(env);
    for (const char* p : {"libcupti.so", "libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so", "/usr/local/cuda/lib64/libcupti.so",
                          "/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/lib/libcupti.so", "/usr/local/cuda/lib/libcupti.so.13",
                          "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13"})
        c.push_back(p);
    // pip's nvidia-cuda-cupti wheels (e.g. nvidia/cu13/lib/libcupti.so.13).
    for (const char* pat : {"/usr/local/lib/python3*/*-packages/nvidia/*/lib/libcupti.so*", "/usr/lib/python3*/*-packages/nvidia/*/lib/libcupti.so*",
                            "/opt/conda/lib/python3*/site-packages/nvidia/*/lib/libcupti.so*"}) {
        glob_t g{};
        if (glob(pat, 0, nullptr, &g) == 0)
            for (size_t i = 0; i < g.gl_pathc; ++i) c.push_back(g.gl_pathv[i]);
        globfree(&g);
    }
    return c;
}

}  // namespace

bool start(const std::string& hint, std::string& why) {
    std::string tried;
    for (const std::string& path : candidates(hint)) {
        handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle) {
            lib_path = path;
            break;
        }
        const char* err = dlerror();
        if (!hint.empty()) tried = err ? err : path;
    }
    if (!handle) {
        why = hint.empty() ? "libcupti not found (give its path with --cupti-lib or $HETSIM_CUPTI_LIB)" : "cannot dlopen " + hint + ": " + tried;
        return false;
    }
    bool ok = sym(api.GetVersion, "cuptiGetVersion", why) && sym(api.GetResultString, "cuptiGetResultString", why) &&
              sym(api.RegisterCallbacks, "cuptiActivityRegisterCallbacks", why) && sym(api.Enable, "cuptiActivityEnable", why) &&
              sym(api.Disable, "cuptiActivityDisable", why) && sym(api.FlushAll, "cuptiActivityFlushAll", why) &&
              sym(api.GetNextRecord, "cuptiActivityGetNextRecord", why) &&
              sym(api.GetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords", why) &&
              sym(api.PushExternalCorrelationId, "cuptiActivityPushExternalCorrelationId", why) &&
              sym(api.PopExternalCorrelationId, "cuptiActivityPopExternalCorrelationId", why) && sym(api.GetTimestamp, "cuptiGetTimestamp", why);
    if (!ok) {
        why += " (" + lib_path + ")";
        return false;
    }
    api.RegisterTimestampCallback =
        reinterpret_cast<decltype(api.RegisterTimestampCallback)>(dlsym(handle, "cuptiActivityRegisterTimestampCallback"));
    if (api.GetVersion(&lib_version) != CUPTI_SUCCESS) {
        why = "cuptiGetVersion failed";
        return false;
    }
    // The activity record layouts used here (Kernel10, Memcpy6, Memset4) are those of the headers
    // this runner was built with; accept a library of the same major CUDA version only.
    if (lib_version / 10000 != CUPTI_API_VERSION / 10000) {
        why = "libcupti " + lib_path + " has API version " + std::to_string(lib_version) + ", the runner was built for " +
              std::to_string(CUPTI_API_VERSION) + " (record layouts may differ)";
        return false;
    }
    CUptiResult r = api.RegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        why = "cuptiActivityRegisterCallbacks: " + result_string(r);
        return false;
    }
    if (api.RegisterTimestampCallback) steady_ts = api.RegisterTimestampCallback(steady_timestamp) == CUPTI_SUCCESS;
    for (CUpti_ActivityKind k : kKinds) {
        r = api.Enable(k);
        if (r != CUPTI_SUCCESS) {
            why = "cuptiActivityEnable(" + std::to_string(int(k)) + "): " + result_string(r);
            for (CUpti_ActivityKind d : kKinds) api.Disable(d);
            return false;
        }
    }
    // Optional: node ids of graphs built with explicit dependencies.
    api.GetGraphNodeId = reinterpret_cast<decltype(api.GetGraphNodeId)>(dlsym(handle, "cuptiGetGraphNodeId"));
    api.Subscribe = reinterpret_cast<decltype(api.Subscribe)>(dlsym(handle, "cuptiSubscribe"));
    api.EnableCallback = reinterpret_cast<decltype(api.EnableCallback)>(dlsym(handle, "cuptiEnableCallback"));
    if (api.GetGraphNodeId && api.Subscribe && api.EnableCallback &&
        api.Subscribe(&subscriber, resource_callback, nullptr) == CUPTI_SUCCESS)
        node_ids = api.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) == CUPTI_SUCCESS;
    enabled = true;
    return true;
}

bool graph_node_ids() { return node_ids; }

uint64_t node_id(void* cuda_graph_node) {
    uint64_t id = 0;
    if (!node_ids || api.GetGraphNodeId(static_cast<CUgraphNode>(cuda_graph_node), &id) != CUPTI_SUCCESS) return 0;
    return id;
}

const std::string& library_path() { return lib_path; }
uint32_t version() { return lib_version; }
bool steady_timestamps() { return steady_ts; }
bool runtime_records() { return runtime_on; }

bool enable_runtime_records() {
    if (!enabled || runtime_on) return runtime_on;
    runtime_on = api.Enable(CUPTI_ACTIVITY_KIND_RUNTIME) == CUPTI_SUCCESS;
    return runtime_on;
}

void disable() {
    if (!enabled) return;
    api.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (CUpti_ActivityKind k : kKinds) api.Disable(k);
    if (runtime_on) api.Disable(CUPTI_ACTIVITY_KIND_RUNTIME);
    enabled = false;
    std::lock_guard<std::mutex> lock(mu);
    acts.clear();
    exts.clear();
}

void push(uint64_t id) {
    CUptiResult r = api.PushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
    if (r != CUPTI_SUCCESS) runtime_fail(("cuptiActivityPushExternalCorrelationId: " + result_string(r)).c_str(), __FILE__, __LINE__);
}

void pop() {
    uint64_t last = 0;
    CUptiResult r = api.PopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    if (r != CUPTI_SUCCESS) runtime_fail(("cuptiActivityPopExternalCorrelationId: " + result_string(r)).c_str(), __FILE__, __LINE__);
}

void collect(std::unordered_map<uint64_t, Span>& out) {
    CUptiResult r = api.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (r != CUPTI_SUCCESS) runtime_fail(("cuptiActivityFlushAll: " + result_string(r)).c_str(), __FILE__, __LINE__);
    std::vector<Act> a;
    std::vector<Ext> e;
    {
        std::lock_guard<std::mutex> lock(mu);
        a.swap(acts);
        e.swap(exts);
    }
    std::unordered_map<uint32_t, uint64_t> ext_of;
    ext_of.reserve(e.size() * 2);
    for (const Ext& x : e) ext_of[x.corr] = x.ext;
    for (const Act& x : a) {
        auto it = ext_of.find(x.corr);
        if (it == ext_of.end()) continue;  // the runner's own work (calibration, resets)
        Span& s = out[it->second];
        s.start = std::min(s.start, x.start);
        s.end = std::max(s.end, x.end);
        s.parts.emplace_back(x.start, x.end);  // graph launches: one record per kernel/copy/memset node
        uint64_t node = x.node;
        if (node && node_ids) {
            std::lock_guard<std::mutex> lock(clone_mu);
            auto o = original_of.find(node);
            if (o != original_of.end()) node = o->second;
        }
        s.nodes.push_back(node);
    }
}

uint64_t dropped_records() {
    std::lock_guard<std::mutex> lock(mu);
    return dropped;
}

int64_t clock_offset(int64_t* window) {
    int64_t best_w = INT64_MAX, best_off = 0;
    for (int i = 0; i < 16; ++i) {
        int64_t a = steady_ns();
        uint64_t c = 0;
        api.GetTimestamp(&c);
        int64_t b = steady_ns();
        if (b - a < best_w) {
            best_w = b - a;
            best_off = int64_t(c) - (a + (b - a) / 2);
        }
    }
    if (window) *window = best_w;
    return best_off;
}

}  // namespace runner::cupti
