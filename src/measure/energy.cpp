#include "measure/energy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <chrono>
#include <utility>

namespace heapbench::energy {

std::string describe_clock_events(std::uint64_t reasons) {
  if (reasons == 0) return "none";
  constexpr std::array<std::pair<std::uint64_t, const char*>, 9> names = {{
      {kGpuIdle, "gpu_idle"},
      {kApplicationsClocksSetting, "applications_clocks_setting"},
      {kSwPowerCap, "sw_power_cap"},
      {kHwSlowdown, "hw_slowdown"},
      {kSyncBoost, "sync_boost"},
      {kSwThermalSlowdown, "sw_thermal_slowdown"},
      {kHwThermalSlowdown, "hw_thermal_slowdown"},
      {kHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {kDisplayClockSetting, "display_clock_setting"},
  }};
  std::string out;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : names) {
    known |= bit;
    if (reasons & bit) out += (out.empty() ? "" : "|") + std::string(name);
  }
  if (const std::uint64_t rest = reasons & ~known; rest != 0) out += fmt::format("{}{:#x}", out.empty() ? "" : "|", rest);
  return out;
}

Clock steady_clock() {
  return [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
}

Resolution analyse(const std::vector<Sample>& samples) {
  Resolution r;
  r.reads = static_cast<int>(samples.size());
  if (samples.empty()) return r;
  r.span_s = samples.back().t - samples.front().t;
  std::vector<double> change_t;  // when each change was first seen
  for (std::size_t i = 1; i < samples.size(); ++i) {
    if (samples[i].mj == samples[i - 1].mj) continue;
    // A counter that went back (a driver reload) is no step of energy.
    if (samples[i].mj < samples[i - 1].mj) continue;
    const std::uint64_t step = samples[i].mj - samples[i - 1].mj;
    r.min_step_mj = r.min_step_mj == 0 ? step : std::min(r.min_step_mj, step);
    r.max_step_mj = std::max(r.max_step_mj, step);
    change_t.push_back(samples[i].t);
  }
  r.updates = static_cast<int>(change_t.size());
  if (change_t.size() < 2) return r;
  std::vector<double> gaps;
  for (std::size_t i = 1; i < change_t.size(); ++i) gaps.push_back(change_t[i] - change_t[i - 1]);
  std::sort(gaps.begin(), gaps.end());
  r.min_update_s = gaps.front();
  r.max_update_s = gaps.back();
  const std::size_t n = gaps.size();
  r.update_s = n % 2 ? gaps[n / 2] : (gaps[n / 2 - 1] + gaps[n / 2]) / 2;
  return r;
}

std::vector<Sample> sample(Reader& reader, const Clock& clock, double limit_s, int changes) {
  std::vector<Sample> out;
  const double t0 = clock();
  int seen = 0;
  while (true) {
    const double t = clock();
    const std::uint64_t mj = reader.total_energy_mj();
    if (!out.empty() && mj != out.back().mj) ++seen;
    out.push_back({t, mj});
    if (seen >= changes || t - t0 >= limit_s) return out;
  }
}

Counters section_counters(const SectionReading& r, double update_s, std::uint64_t calls) {
  Counters out;
  out["energy_s"] = r.seconds;
  if (r.have_reasons) out["clock_event_reasons"] = static_cast<double>(r.reasons);
  if (r.power_w) out["power_w"] = *r.power_w;
  const bool moved = r.end_mj > r.start_mj;
  const bool resolved = update_s > 0 && moved && r.seconds >= kMinUpdatesPerSection * update_s;
  out["energy_resolved"] = resolved ? 1 : 0;
  if (!resolved) return out;
  const double joules = static_cast<double>(r.end_mj - r.start_mj) * 1e-3;
  out["energy_j"] = joules;
  out["avg_power_w"] = joules / r.seconds;
  if (calls > 0) out["energy_per_m_allocs_j"] = joules / static_cast<double>(calls) * 1e6;
  return out;
}

Meter::Meter(std::string absent) : absent_(std::move(absent)) {}

std::string format_resolution(const std::string& device, const Resolution& r) {
  return fmt::format("{} {} {} {:.17g} {:.17g} {:.17g} {} {} {:.17g}", device, r.reads, r.updates, r.update_s,
                     r.min_update_s, r.max_update_s, r.min_step_mj, r.max_step_mj, r.span_s);
}

std::optional<Resolution> parse_resolution(const std::string& text, const std::string& device) {
  std::istringstream in(text);
  std::string named;
  Resolution r;
  if (!(in >> named >> r.reads >> r.updates >> r.update_s >> r.min_update_s >> r.max_update_s >> r.min_step_mj >>
        r.max_step_mj >> r.span_s)) {
    return std::nullopt;
  }
  std::string rest;
  if (in >> rest || named != device || r.updates < 2 || !(r.update_s > 0) || !std::isfinite(r.update_s)) {
    return std::nullopt;
  }
  return r;
}

std::optional<Resolution> inherited_resolution(const std::string& device) {
  const char* text = std::getenv(kResolutionVar);
  return text == nullptr || device.empty() ? std::nullopt : parse_resolution(text, device);
}

void Meter::open(Opened opened, Clock clock, double limit_s, std::optional<Resolution> known) {
  reader_.reset();
  if (!opened.reader) {
    absent_ = opened.absent.empty() ? "no energy reader" : opened.absent;
    return;
  }
  try {
    if (known) {
      (void)opened.reader->total_energy_mj();  // it answers: what was measured of it stands
      resolution_ = *known;
    } else {
      // Six changes give five whole intervals between them (the first change ends
      // an interval that began before the sampling); their median stands when the
      // host delays one read.
      resolution_ = analyse(sample(*opened.reader, clock, limit_s, kOpeningChanges));
    }
  } catch (const ReadError& e) {
    absent_ = fmt::format("the energy counter of {} did not answer: {}", opened.reader->device(), e.what());
    return;
  }
  if (resolution_.updates < 2) {
    absent_ = fmt::format("the energy counter of {} changed {} time(s) in {:.2g} s of sampling: its resolution is "
                          "unknown",
                          opened.reader->device(), resolution_.updates, resolution_.span_s);
    return;
  }
  reader_ = std::move(opened.reader);
  clock_ = std::move(clock);
  absent_.clear();
}

std::map<std::string, std::string> Meter::context() const {
  if (!reading()) return {{"heapbench_energy_absent", absent_}};
  return {{"heapbench_energy_device", reader_->device()},
          {"heapbench_energy_update_s", fmt::format("{:g}", resolution_.update_s)}};
}

namespace {
void warn_once(const std::string& what) {
  static bool said = false;
  if (said) return;
  said = true;
  fmt::print(stderr, "heapbench: {}; this case has no energy counters\n", what);
}
}  // namespace

Section::Section(Meter* meter) : meter_(meter && meter->reading() ? meter : nullptr) {
  if (!meter_) return;
  try {
    Reader& r = *meter_->reader_;
    if (auto reasons = r.clock_event_reasons()) {
      reasons0_ = *reasons;
      have_reasons0_ = true;
    }
  } catch (const ReadError& e) {
    warn_once(fmt::format("reading the energy counter failed: {}", e.what()));
    return;
  }
  // The reader is used by one thread at a time: finish() waits for this read
  // before it reads anything.
  // The section starts now, on this thread, as it did when the read was made
  // here: the read itself comes a thread's start later, well inside one of the
  // counter's updates.
  t0_ = meter_->clock_();
  Meter* m = meter_;
  auto first = [m] { return m->reader_->total_energy_mj(); };
  if (meter_->start_read_ == Meter::StartRead::background) {
    start_ = std::async(std::launch::async, first);
  } else {
    std::promise<std::uint64_t> now;
    try {
      now.set_value(first());
    } catch (const ReadError&) {
      now.set_exception(std::current_exception());
    }
    start_ = now.get_future();
  }
  started_ = true;
}

Counters Section::finish(std::uint64_t calls) {
  if (!started_) return {};
  started_ = false;
  try {
    const std::uint64_t mj0 = start_.get();
    Reader& r = *meter_->reader_;
    SectionReading s;
    s.start_mj = mj0;
    s.end_mj = mj0;  // not moved: no figure, as for any section too short to resolve
    s.seconds = meter_->clock_() - t0_;
    const double update_s = meter_->resolution_.update_s;
    if (update_s > 0 && s.seconds >= kMinUpdatesPerSection * update_s) {
      s.end_mj = r.total_energy_mj();
      s.seconds = meter_->clock_() - t0_;
    }
    if (s.end_mj < s.start_mj) {
      warn_once(fmt::format("the energy counter went back ({} -> {} mJ)", s.start_mj, s.end_mj));
      return {};
    }
    s.power_w = r.power_w();
    const auto reasons = r.clock_event_reasons();
    s.have_reasons = have_reasons0_ && reasons;
    if (s.have_reasons) s.reasons = reasons0_ | *reasons;
    return section_counters(s, update_s, calls);
  } catch (const ReadError& e) {
    warn_once(fmt::format("reading the energy counter failed: {}", e.what()));
    return {};
  }
}

}  // namespace heapbench::energy
