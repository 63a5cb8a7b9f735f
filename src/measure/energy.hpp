#pragma once
// The GPU's energy around each case's measured section (docs/metrics.md,
// "Energy"): NVML's total-energy counter read at the start and the end of the
// section, its power reading and its clock-event (throttle) reasons. The
// harness sees only Meter and Section; the counter itself is behind Reader,
// which NVML implements (open_nvml, loaded with dlopen at run time, so that
// heapbench builds and runs without a driver) and tests fake. Plain C++: the
// resolution rule and the arithmetic are tested on the host.
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "measure/reducer.hpp"

namespace heapbench::energy {

// A failed read of a counter that did answer before.
struct ReadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One GPU's counters. Throws ReadError when a read fails.
class Reader {
 public:
  virtual ~Reader() = default;
  // Energy since the driver was loaded, mJ (nvmlDeviceGetTotalEnergyConsumption).
  virtual std::uint64_t total_energy_mj() = 0;
  // The board's power draw as NVML reports it, W; nullopt where unsupported.
  virtual std::optional<double> power_w() = 0;
  // The clock-event reasons in force now (ClockEvent bits); nullopt where unsupported.
  virtual std::optional<std::uint64_t> clock_event_reasons() = 0;
  // The device as NVML names it: its PCI bus id.
  virtual std::string device() const = 0;
};

// A reader, or why there is none ("libnvidia-ml.so.1 not found: ...").
struct Opened {
  std::unique_ptr<Reader> reader;
  std::string absent;
};

// NVML's reader for the GPU at `pci_bus_id` (cudaDeviceGetPCIBusId's form,
// "0000:41:00.0"): matched by bus id, since CUDA and NVML may number devices
// differently. Never throws: every failure is an Opened with `absent` set.
Opened open_nvml(const std::string& pci_bus_id);

// NVML's clock-event reason bits (nvmlClocksEventReason*, the ABI values of
// nvml.h), and their names in the results' decoding.
enum ClockEvent : std::uint64_t {
  kGpuIdle = 0x1,
  kApplicationsClocksSetting = 0x2,
  kSwPowerCap = 0x4,
  kHwSlowdown = 0x8,
  kSyncBoost = 0x10,
  kSwThermalSlowdown = 0x20,
  kHwThermalSlowdown = 0x40,
  kHwPowerBrakeSlowdown = 0x80,
  kDisplayClockSetting = 0x100,
};
// "sw_power_cap|hw_slowdown"; "none" for 0; unknown bits as "0x...".
std::string describe_clock_events(std::uint64_t reasons);

// Seconds on a monotonic clock; tests pass their own.
using Clock = std::function<double()>;
Clock steady_clock();

// How fine the counter is: the time between its updates and the smallest
// change seen, from samples taken in a tight loop.
struct Sample {
  double t = 0;              // s
  std::uint64_t mj = 0;      // the counter
};
struct Resolution {
  int reads = 0;             // samples taken
  int updates = 0;           // changes of the counter seen
  double update_s = 0;       // median time between two changes (0: fewer than 2 changes)
  double min_update_s = 0;   // shortest time between two changes
  double max_update_s = 0;   // longest
  std::uint64_t min_step_mj = 0;  // smallest non-zero change
  std::uint64_t max_step_mj = 0;  // largest change
  double span_s = 0;         // first to last sample
};
Resolution analyse(const std::vector<Sample>& samples);
// Samples the counter until `changes` changes were seen or `limit_s` passed.
std::vector<Sample> sample(Reader& reader, const Clock& clock, double limit_s, int changes);

// A section must span this many of the counter's update intervals for its
// energy figures to be published: reading the counter at both ends of a
// section of T seconds can be off by up to one update's energy, so the
// relative error is at most update_s / T, here 1 %.
inline constexpr double kMinUpdatesPerSection = 100;
// Changes of the counter Meter::open waits for to measure its update interval.
inline constexpr int kOpeningChanges = 6;

// What one case's section measured, before it becomes counters.
struct SectionReading {
  double seconds = 0;               // wall time between the two reads of the counter
  std::uint64_t start_mj = 0, end_mj = 0;
  std::uint64_t reasons = 0;        // OR of the clock-event reasons read at both ends
  bool have_reasons = false;
  std::optional<double> power_w;    // NVML's reading at the end
};

// The section's counters (docs/metrics.md): energy_s, energy_resolved,
// clock_event_reasons, power_w always; energy_j, avg_power_w only when the
// section spanned kMinUpdatesPerSection updates of `update_s` and the counter
// moved; energy_per_m_allocs_j then too, where `calls` (allocation calls the
// section made) is not 0. update_s 0 (unknown) resolves nothing.
Counters section_counters(const SectionReading& r, double update_s, std::uint64_t calls);

// One GPU's energy for the run: opened once per process, then read around
// every case's measured section.
// A counter's resolution handed from the process that measured it to the
// processes it starts (heapbench's parent to its children under isolation):
// the environment variable, internal, never recorded, that carries
// format_resolution's text, and its reading back, for `device` only (nullopt
// for another device's, or text that is not one).
inline constexpr const char* kResolutionVar = "HEAPBENCH_ENERGY_RESOLUTION";
std::string format_resolution(const std::string& device, const Resolution& r);
std::optional<Resolution> parse_resolution(const std::string& text, const std::string& device);
// The resolution kResolutionVar hands this process for `device`, if any.
std::optional<Resolution> inherited_resolution(const std::string& device);

class Meter {
 public:
  // Not reading: `absent` says why.
  explicit Meter(std::string absent = "not opened");
  // Takes the reader, or the reason there is none, and measures the counter's
  // update interval (sampling it for at most `limit_s`; about 0.6 s on an
  // H200). With `known`, a resolution measured before on the same device, the
  // counter is read once to see that it answers, not sampled. A counter that
  // does not answer, or does not move, leaves the meter not reading.
  void open(Opened opened, Clock clock, double limit_s = 2.0, std::optional<Resolution> known = std::nullopt);
  bool reading() const { return reader_ != nullptr; }
  // Where a Section makes its first read: on a thread of its own (the default,
  // so the case does not wait for it), or on the caller's (a fake clock that
  // the caller advances: the host tests).
  enum class StartRead { background, foreground };
  void set_start_read(StartRead how) { start_read_ = how; }
  // The device the counter belongs to ("" when not reading).
  std::string device() const { return reader_ ? reader_->device() : std::string(); }
  const std::string& absent() const { return absent_; }
  const Resolution& resolution() const { return resolution_; }
  // The results file's context keys (docs/json.md): heapbench_energy_device
  // and heapbench_energy_update_s, or heapbench_energy_absent.
  std::map<std::string, std::string> context() const;

 private:
  friend class Section;
  std::unique_ptr<Reader> reader_;
  Clock clock_;
  std::string absent_;
  Resolution resolution_;
  StartRead start_read_ = StartRead::background;
};

// A case's measured section: reads the counter when made, and again in
// finish(). Without a reading meter, or after a failed read, finish() gives
// no counters (a failed read is said once on stderr).
//
// A read of the energy counter takes milliseconds (3.4 ms on an H200: 584
// reads in 2 s), so the section's first read is made on a thread of its own
// while the case's first batch is launched (Meter::StartRead::background), and
// finish() reads the counter again only when the section has lasted long
// enough to be resolved (kMinUpdatesPerSection updates): a shorter section
// gets no energy figure whatever the second read says.
class Section {
 public:
  explicit Section(Meter* meter);
  Counters finish(std::uint64_t calls);

 private:
  Meter* meter_;
  bool started_ = false;
  double t0_ = 0;
  std::future<std::uint64_t> start_;  // the counter's first read
  std::uint64_t reasons0_ = 0;
  bool have_reasons0_ = false;
};

}  // namespace heapbench::energy
