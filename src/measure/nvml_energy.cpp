// energy::Reader over NVML, loaded at run time: CI machines and build hosts
// have no driver (and the toolkit as installed here has no nvml.h), so nothing
// links against libnvidia-ml. The few entry points are declared here by their
// documented C signatures; NVML's handles are opaque pointers and its return
// codes ints (0 is NVML_SUCCESS).
#include <dlfcn.h>

#include <fmt/format.h>

#include "measure/energy.hpp"

namespace heapbench::energy {
namespace {

using nvml_return = int;
using nvml_device = struct nvml_device_opaque*;
constexpr nvml_return kSuccess = 0;
constexpr nvml_return kNotSupported = 3;  // NVML_ERROR_NOT_SUPPORTED

struct Nvml {
  void* lib = nullptr;
  nvml_return (*init)() = nullptr;                         // nvmlInit_v2
  nvml_return (*shutdown)() = nullptr;                     // nvmlShutdown
  const char* (*error_string)(nvml_return) = nullptr;      // nvmlErrorString
  nvml_return (*by_bus_id)(const char*, nvml_device*) = nullptr;             // nvmlDeviceGetHandleByPciBusId_v2
  nvml_return (*energy)(nvml_device, unsigned long long*) = nullptr;         // nvmlDeviceGetTotalEnergyConsumption
  nvml_return (*power)(nvml_device, unsigned int*) = nullptr;                // nvmlDeviceGetPowerUsage
  nvml_return (*reasons)(nvml_device, unsigned long long*) = nullptr;        // ...CurrentClocksEventReasons

  std::string said(nvml_return r) const {
    return error_string ? fmt::format("{} (NVML error {})", error_string(r), r) : fmt::format("NVML error {}", r);
  }
};

template <class F>
bool resolve(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

class NvmlReader final : public Reader {
 public:
  NvmlReader(Nvml nvml, nvml_device dev, std::string bus_id) : nvml_(nvml), dev_(dev), bus_id_(std::move(bus_id)) {}
  ~NvmlReader() override {
    nvml_.shutdown();
    dlclose(nvml_.lib);
  }
  NvmlReader(const NvmlReader&) = delete;
  NvmlReader& operator=(const NvmlReader&) = delete;

  std::uint64_t total_energy_mj() override {
    unsigned long long mj = 0;
    if (const nvml_return r = nvml_.energy(dev_, &mj); r != kSuccess) {
      throw ReadError(fmt::format("nvmlDeviceGetTotalEnergyConsumption: {}", nvml_.said(r)));
    }
    return mj;
  }
  std::optional<double> power_w() override {
    unsigned int mw = 0;
    const nvml_return r = nvml_.power(dev_, &mw);
    if (r == kNotSupported) return std::nullopt;
    if (r != kSuccess) throw ReadError(fmt::format("nvmlDeviceGetPowerUsage: {}", nvml_.said(r)));
    return mw * 1e-3;
  }
  std::optional<std::uint64_t> clock_event_reasons() override {
    if (!nvml_.reasons) return std::nullopt;
    unsigned long long bits = 0;
    const nvml_return r = nvml_.reasons(dev_, &bits);
    if (r == kNotSupported) return std::nullopt;
    if (r != kSuccess) throw ReadError(fmt::format("clock-event reasons: {}", nvml_.said(r)));
    return bits;
  }
  std::string device() const override { return bus_id_; }

 private:
  Nvml nvml_;
  nvml_device dev_;
  std::string bus_id_;
};

}  // namespace

Opened open_nvml(const std::string& pci_bus_id) {
  Opened out;
  Nvml n;
  n.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!n.lib) {
    const char* why = dlerror();
    out.absent = fmt::format("libnvidia-ml.so.1 could not be loaded: {}", why ? why : "no reason given");
    return out;
  }
  const auto fail = [&](std::string why) {
    dlclose(n.lib);
    out.absent = std::move(why);
    return std::move(out);
  };
  if (!resolve(n.lib, "nvmlInit_v2", n.init) || !resolve(n.lib, "nvmlShutdown", n.shutdown) ||
      !resolve(n.lib, "nvmlDeviceGetHandleByPciBusId_v2", n.by_bus_id) ||
      !resolve(n.lib, "nvmlDeviceGetTotalEnergyConsumption", n.energy) ||
      !resolve(n.lib, "nvmlDeviceGetPowerUsage", n.power)) {
    return fail("libnvidia-ml.so.1 lacks an entry point heapbench reads (nvmlInit_v2, "
                "nvmlDeviceGetHandleByPciBusId_v2, nvmlDeviceGetTotalEnergyConsumption or nvmlDeviceGetPowerUsage)");
  }
  resolve(n.lib, "nvmlErrorString", n.error_string);
  // The newer name first; drivers before it have only the throttle name (same bits).
  if (!resolve(n.lib, "nvmlDeviceGetCurrentClocksEventReasons", n.reasons)) {
    resolve(n.lib, "nvmlDeviceGetCurrentClocksThrottleReasons", n.reasons);
  }
  if (const nvml_return r = n.init(); r != kSuccess) return fail(fmt::format("nvmlInit_v2: {}", n.said(r)));
  nvml_device dev = nullptr;
  if (const nvml_return r = n.by_bus_id(pci_bus_id.c_str(), &dev); r != kSuccess) {
    n.shutdown();
    return fail(fmt::format("NVML has no device at PCI bus id {}: {}", pci_bus_id, n.said(r)));
  }
  // A counter that does not exist on this GPU (before Volta) is said here, once.
  unsigned long long mj = 0;
  if (const nvml_return r = n.energy(dev, &mj); r != kSuccess) {
    n.shutdown();
    return fail(fmt::format("nvmlDeviceGetTotalEnergyConsumption on {}: {}", pci_bus_id, n.said(r)));
  }
  out.reader = std::make_unique<NvmlReader>(n, dev, pci_bus_id);
  return out;
}

}  // namespace heapbench::energy
