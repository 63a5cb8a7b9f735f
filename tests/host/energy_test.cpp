// The energy figures' rules on a fake counter: its resolution measured from
// samples, the threshold a section must pass, the per-allocation arithmetic,
// the clock-event decoding, and the runs without a counter.
#include "measure/energy.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <future>
#include <memory>

namespace heapbench::energy {
namespace {

// A GPU that draws `watts` and whose counter moves every `update_s` seconds,
// on a clock that advances `tick_s` at every reading of it.
struct FakeGpu {
  double now = 100.0;  // s
  double tick_s = 1e-4;
  double watts = 500;
  double update_s = 0.02;
  double clock() { return now += tick_s; }
  std::uint64_t counter() const {
    const double updated = std::floor(now / update_s) * update_s;
    return static_cast<std::uint64_t>(std::llround(updated * watts * 1e3));  // mJ
  }
};

class FakeReader final : public Reader {
 public:
  explicit FakeReader(FakeGpu* gpu) : gpu_(gpu) {}
  std::uint64_t total_energy_mj() override {
    if (fail_energy) throw ReadError("fake: energy read failed");
    return gpu_->counter();
  }
  std::optional<double> power_w() override { return gpu_->watts; }
  std::optional<std::uint64_t> clock_event_reasons() override {
    if (!reasons_supported) return std::nullopt;
    return next_reasons;
  }
  std::string device() const override { return "00000000:41:00.0"; }

  bool fail_energy = false;
  bool reasons_supported = true;
  std::uint64_t next_reasons = 0;

 private:
  FakeGpu* gpu_;
};

Opened fake(FakeGpu& gpu, FakeReader** handle = nullptr) {
  auto r = std::make_unique<FakeReader>(&gpu);
  if (handle) *handle = r.get();
  return {std::move(r), ""};
}

Clock clock_of(FakeGpu& gpu) {
  return [&gpu] { return gpu.clock(); };
}

// Advances the fake time by `seconds` (what a case's rounds would take).
void run_for(FakeGpu& gpu, double seconds) { gpu.now += seconds; }

TEST(EnergyResolution, AnalyseFindsTheUpdateIntervalAndTheSmallestStep) {
  const std::vector<Sample> s = {{0.000, 1000}, {0.005, 1000}, {0.010, 1007}, {0.015, 1007},
                                 {0.030, 1019}, {0.045, 1019}, {0.070, 1030}};
  const Resolution r = analyse(s);
  EXPECT_EQ(r.reads, 7);
  EXPECT_EQ(r.updates, 3);
  EXPECT_EQ(r.min_step_mj, 7u);
  EXPECT_EQ(r.max_step_mj, 12u);
  EXPECT_NEAR(r.min_update_s, 0.020, 1e-12);
  EXPECT_NEAR(r.max_update_s, 0.040, 1e-12);
  EXPECT_NEAR(r.update_s, 0.030, 1e-12);  // the median of 20 and 40 ms
  EXPECT_NEAR(r.span_s, 0.070, 1e-12);
}

TEST(EnergyResolution, ACounterThatNeverMovesHasNoInterval) {
  const Resolution r = analyse({{0, 5}, {1, 5}, {2, 5}});
  EXPECT_EQ(r.updates, 0);
  EXPECT_EQ(r.update_s, 0);
  EXPECT_EQ(r.min_step_mj, 0u);
  EXPECT_EQ(analyse({}).reads, 0);
}

TEST(EnergyResolution, SamplingStopsAtTheChangesAskedFor) {
  FakeGpu gpu;
  FakeReader reader(&gpu);
  const Clock clock = clock_of(gpu);
  const Resolution r = analyse(sample(reader, clock, 10.0, 3));
  EXPECT_EQ(r.updates, 3);
  EXPECT_NEAR(r.update_s, gpu.update_s, 2 * gpu.tick_s);
  EXPECT_NEAR(static_cast<double>(r.min_step_mj), gpu.watts * gpu.update_s * 1e3, 1.0);
  EXPECT_LT(r.span_s, 4 * gpu.update_s);
}

TEST(EnergySection, CountersWhenTheSectionSpansEnoughUpdates) {
  SectionReading s;
  s.seconds = 4.0;
  s.start_mj = 10'000;
  s.end_mj = 2'010'000;  // 2000 J
  s.have_reasons = true;
  s.reasons = kSwPowerCap | kGpuIdle;
  s.power_w = 480;
  const Counters c = section_counters(s, 0.02, 4'000'000'000);
  EXPECT_EQ(c.at("energy_resolved"), 1);
  EXPECT_DOUBLE_EQ(c.at("energy_j"), 2000);
  EXPECT_DOUBLE_EQ(c.at("avg_power_w"), 500);
  EXPECT_DOUBLE_EQ(c.at("energy_per_m_allocs_j"), 0.5);  // 2000 J / 4000 M calls
  EXPECT_DOUBLE_EQ(c.at("energy_s"), 4.0);
  EXPECT_DOUBLE_EQ(c.at("power_w"), 480);
  EXPECT_DOUBLE_EQ(c.at("clock_event_reasons"), 5);
}

TEST(EnergySection, TheThresholdIsAHundredUpdates) {
  SectionReading s;
  s.start_mj = 0;
  s.end_mj = 1'000;
  s.seconds = kMinUpdatesPerSection * 0.02;  // exactly at the threshold
  EXPECT_EQ(section_counters(s, 0.02, 1000).at("energy_resolved"), 1);
  s.seconds = kMinUpdatesPerSection * 0.02 * 0.99;  // just under it: no figure, and why
  const Counters c = section_counters(s, 0.02, 1000);
  EXPECT_EQ(c.at("energy_resolved"), 0);
  EXPECT_EQ(c.count("energy_j"), 0u);
  EXPECT_EQ(c.count("avg_power_w"), 0u);
  EXPECT_EQ(c.count("energy_per_m_allocs_j"), 0u);
  EXPECT_DOUBLE_EQ(c.at("energy_s"), s.seconds);
}

TEST(EnergySection, NoFigureFromACounterThatDidNotMoveOrAnUnknownInterval) {
  SectionReading s;
  s.seconds = 10;
  s.start_mj = s.end_mj = 7;
  EXPECT_EQ(section_counters(s, 0.02, 100).at("energy_resolved"), 0);
  s.end_mj = 9'000;
  EXPECT_EQ(section_counters(s, 0, 100).at("energy_resolved"), 0);
  EXPECT_EQ(section_counters(s, 0, 100).count("energy_j"), 0u);
}

TEST(EnergySection, NoPerAllocationFigureWithoutCalls) {
  SectionReading s;
  s.seconds = 10;
  s.end_mj = 5'000;
  const Counters c = section_counters(s, 0.02, 0);  // printf: no allocation calls
  EXPECT_DOUBLE_EQ(c.at("energy_j"), 5);
  EXPECT_EQ(c.count("energy_per_m_allocs_j"), 0u);
  EXPECT_EQ(c.count("clock_event_reasons"), 0u);  // not read: not written
  EXPECT_EQ(c.count("power_w"), 0u);
}

TEST(EnergyMeter, ASectionOfALongCaseMeasuresItsEnergy) {
  FakeGpu gpu;
  FakeReader* reader = nullptr;
  auto meter = std::make_shared<Meter>();
  meter->open(fake(gpu, &reader), clock_of(gpu));
  meter->set_start_read(Meter::StartRead::foreground);  // the fake clock moves on this thread
  ASSERT_TRUE(meter->reading()) << meter->absent();
  EXPECT_NEAR(meter->resolution().update_s, gpu.update_s, 2 * gpu.tick_s);
  const auto ctx = meter->context();
  EXPECT_EQ(ctx.at("heapbench_energy_device"), "00000000:41:00.0");
  EXPECT_EQ(ctx.count("heapbench_energy_absent"), 0u);
  EXPECT_NEAR(std::stod(ctx.at("heapbench_energy_update_s")), gpu.update_s, 2 * gpu.tick_s);

  reader->next_reasons = kGpuIdle;
  Section section(meter.get());
  run_for(gpu, 3.0);
  reader->next_reasons = kHwThermalSlowdown;
  const Counters c = section.finish(1'500'000'000);
  EXPECT_EQ(c.at("energy_resolved"), 1);
  // 3 s at 500 W, read to within one update at each end.
  EXPECT_NEAR(c.at("energy_j"), 1500, gpu.watts * gpu.update_s);
  EXPECT_NEAR(c.at("avg_power_w"), 500, 500 * gpu.update_s / 3.0 * 1.01);
  EXPECT_NEAR(c.at("energy_per_m_allocs_j"), 1.0, 1.0 * gpu.update_s / 3.0 * 1.01);
  EXPECT_EQ(static_cast<std::uint64_t>(c.at("clock_event_reasons")), kGpuIdle | kHwThermalSlowdown);
  EXPECT_EQ(section.finish(1), Counters{});  // read once only
}

// How a reader counts its reads, to tell sampling from a single read.
class CountingReader final : public Reader {
 public:
  explicit CountingReader(FakeGpu* gpu, int* reads) : gpu_(gpu), reads_(reads) {}
  std::uint64_t total_energy_mj() override {
    ++*reads_;
    return gpu_->counter();
  }
  std::optional<double> power_w() override { return gpu_->watts; }
  std::optional<std::uint64_t> clock_event_reasons() override { return std::nullopt; }
  std::string device() const override { return "00000000:41:00.0"; }

 private:
  FakeGpu* gpu_;
  int* reads_;
};

TEST(EnergyMeter, AResolutionMeasuredBeforeIsTakenWithOneRead) {
  // The parent of isolation measures the counter once; each child takes it (issue 39: 0.6 s a child on an H200).
  FakeGpu gpu;
  Meter parent;
  parent.open(fake(gpu), clock_of(gpu));
  ASSERT_TRUE(parent.reading());
  const std::string handed = format_resolution(parent.device(), parent.resolution());
  const auto known = parse_resolution(handed, "00000000:41:00.0");
  ASSERT_TRUE(known.has_value()) << handed;
  EXPECT_EQ(known->update_s, parent.resolution().update_s);
  EXPECT_EQ(known->updates, parent.resolution().updates);
  EXPECT_EQ(known->max_step_mj, parent.resolution().max_step_mj);

  int reads = 0;
  Meter child;
  child.open({std::make_unique<CountingReader>(&gpu, &reads), ""}, clock_of(gpu), 2.0, known);
  ASSERT_TRUE(child.reading());
  EXPECT_EQ(reads, 1);
  EXPECT_EQ(child.context(), parent.context());

  int sampled = 0;
  Meter alone;
  alone.open({std::make_unique<CountingReader>(&gpu, &sampled), ""}, clock_of(gpu));
  EXPECT_GT(sampled, 10);  // without it, the counter is sampled through six changes
}

TEST(EnergyMeter, AHandedResolutionIsTakenOnlyForItsDeviceAndWhole) {
  Resolution r;
  r.reads = 9;
  r.updates = 6;
  r.update_s = 0.1;
  r.span_s = 0.6;
  const std::string text = format_resolution("00000000:41:00.0", r);
  EXPECT_TRUE(parse_resolution(text, "00000000:41:00.0").has_value());
  EXPECT_FALSE(parse_resolution(text, "00000000:42:00.0").has_value());  // another GPU's
  EXPECT_FALSE(parse_resolution(text + " 7", "00000000:41:00.0").has_value());
  EXPECT_FALSE(parse_resolution("00000000:41:00.0 9 6", "00000000:41:00.0").has_value());
  EXPECT_FALSE(parse_resolution("", "00000000:41:00.0").has_value());
  r.updates = 1;  // an unknown interval is never handed on
  EXPECT_FALSE(parse_resolution(format_resolution("d", r), "d").has_value());
  r.updates = 6;
  r.update_s = 0;
  EXPECT_FALSE(parse_resolution(format_resolution("d", r), "d").has_value());
}

TEST(EnergyMeter, AShortCaseGetsNoFigureAndSaysSo) {
  FakeGpu gpu;
  Meter meter;
  meter.open(fake(gpu), clock_of(gpu));
  meter.set_start_read(Meter::StartRead::foreground);
  ASSERT_TRUE(meter.reading());
  Section section(&meter);
  run_for(gpu, 0.5);  // 25 updates of 20 ms: fewer than 100
  const Counters c = section.finish(1'000'000);
  EXPECT_EQ(c.at("energy_resolved"), 0);
  EXPECT_EQ(c.count("energy_per_m_allocs_j"), 0u);
  EXPECT_NEAR(c.at("energy_s"), 0.5, 0.01);
}

TEST(EnergyMeter, WithoutNvmlTheRunGoesOnAndTheContextSaysWhy) {
  Meter meter;
  meter.open(Opened{nullptr, "libnvidia-ml.so.1 could not be loaded: not found"}, steady_clock());
  EXPECT_FALSE(meter.reading());
  EXPECT_EQ(meter.context(), (std::map<std::string, std::string>{
                                 {"heapbench_energy_absent", "libnvidia-ml.so.1 could not be loaded: not found"}}));
  Section section(&meter);
  EXPECT_EQ(section.finish(1000), Counters{});  // no counters at all: never a 0 that was not read
  Section none(nullptr);
  EXPECT_EQ(none.finish(1000), Counters{});
}

TEST(EnergyMeter, ACounterThatDoesNotMoveIsNotRead) {
  FakeGpu gpu;
  gpu.update_s = 1e9;  // never updates within the sampling
  Meter meter;
  meter.open(fake(gpu), clock_of(gpu), 0.05);
  EXPECT_FALSE(meter.reading());
  EXPECT_NE(meter.absent().find("resolution is unknown"), std::string::npos) << meter.absent();
}

TEST(EnergyMeter, AFailedReadDropsTheCaseCountersNotTheRun) {
  FakeGpu gpu;
  FakeReader* reader = nullptr;
  Meter meter;
  meter.open(fake(gpu, &reader), clock_of(gpu));
  meter.set_start_read(Meter::StartRead::foreground);
  ASSERT_TRUE(meter.reading());
  Section section(&meter);
  run_for(gpu, 3.0);
  reader->fail_energy = true;
  EXPECT_EQ(section.finish(1000), Counters{});
  reader->fail_energy = false;
  Section next(&meter);
  run_for(gpu, 3.0);
  EXPECT_EQ(next.finish(1000).at("energy_resolved"), 1);
}

TEST(EnergyMeter, UnsupportedClockEventReasonsAreLeftOut) {
  FakeGpu gpu;
  FakeReader* reader = nullptr;
  Meter meter;
  meter.open(fake(gpu, &reader), clock_of(gpu));
  meter.set_start_read(Meter::StartRead::foreground);
  reader->reasons_supported = false;
  Section section(&meter);
  run_for(gpu, 3.0);
  const Counters c = section.finish(1000);
  EXPECT_EQ(c.count("clock_event_reasons"), 0u);
  EXPECT_EQ(c.at("energy_resolved"), 1);
}

TEST(EnergyMeter, AShortSectionReadsTheCounterOnlyAtItsStart) {
  // A read takes milliseconds on a real GPU; a section too short to resolve
  // gets no energy figure, so its end is not read (issue 39).
  FakeGpu gpu;
  int reads = 0;
  Meter meter;
  meter.open({std::make_unique<CountingReader>(&gpu, &reads), ""}, clock_of(gpu));
  ASSERT_TRUE(meter.reading());
  meter.set_start_read(Meter::StartRead::foreground);
  reads = 0;
  Section short_one(&meter);
  run_for(gpu, 0.5);
  const Counters c = short_one.finish(1000);
  EXPECT_EQ(reads, 1);
  EXPECT_EQ(c.at("energy_resolved"), 0);
  EXPECT_NEAR(c.at("energy_s"), 0.5, 0.01);
  EXPECT_EQ(c.count("energy_j"), 0u);
  reads = 0;
  Section long_one(&meter);
  run_for(gpu, 3.0);
  EXPECT_EQ(long_one.finish(1000).at("energy_resolved"), 1);
  EXPECT_EQ(reads, 2);
}

// A counter whose reads wait until the test lets them go (or 5 s pass).
class GatedReader final : public Reader {
 public:
  explicit GatedReader(std::shared_future<void> gate) : gate_(std::move(gate)) {}
  std::uint64_t total_energy_mj() override {
    if (open_reads_-- > 0) return 1000;  // Meter::open's reads
    if (gate_.wait_for(std::chrono::seconds(5)) != std::future_status::ready) waited_out = true;
    return 2000;
  }
  std::optional<double> power_w() override { return 300.0; }
  std::optional<std::uint64_t> clock_event_reasons() override { return 0; }
  std::string device() const override { return "00000000:41:00.0"; }
  std::atomic<bool> waited_out{false};

 private:
  std::shared_future<void> gate_;
  int open_reads_ = 1;
};

TEST(EnergyMeter, TheSectionsFirstReadDoesNotHoldTheCaseUp) {
  std::promise<void> release;
  auto reader = std::make_unique<GatedReader>(release.get_future().share());
  GatedReader* gated = reader.get();
  Resolution known;
  known.reads = 9;
  known.updates = 6;
  known.update_s = 0.1;
  Meter meter;
  meter.open({std::move(reader), ""}, steady_clock(), 2.0, known);  // one read: it answers
  ASSERT_TRUE(meter.reading());
  const auto t0 = std::chrono::steady_clock::now();
  Section section(&meter);  // background by default: returns while the read waits
  const double made_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  release.set_value();
  const Counters c = section.finish(1000);
  EXPECT_LT(made_s, 1.0) << "the section waited for its first read";
  EXPECT_FALSE(gated->waited_out.load());
  EXPECT_EQ(c.at("energy_resolved"), 0);
  EXPECT_EQ(c.at("power_w"), 300.0);
}

TEST(ClockEvents, DecodedByName) {
  EXPECT_EQ(describe_clock_events(0), "none");
  EXPECT_EQ(describe_clock_events(kSwPowerCap | kHwSlowdown), "sw_power_cap|hw_slowdown");
  EXPECT_EQ(describe_clock_events(kGpuIdle | 0x10000), "gpu_idle|0x10000");
  EXPECT_EQ(describe_clock_events(kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown),
            "sw_thermal_slowdown|hw_thermal_slowdown|hw_power_brake_slowdown");
}

TEST(Nvml, WithoutADriverOpeningSaysWhyAndThrowsNothing) {
  // This machine, CI's and every build host have no driver; on a GPU machine
  // NVML opens, and a bus id that is no device's is refused by NVML.
  const Opened o = open_nvml("ffff:ff:1f.7");
  EXPECT_EQ(o.reader, nullptr);
  EXPECT_FALSE(o.absent.empty());
}

}  // namespace
}  // namespace heapbench::energy
