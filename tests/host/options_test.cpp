#include "advise/advise.hpp"
#include "cases/case_naming.hpp"
#include "cases/catalog.hpp"
#include "check/check.hpp"
#include "cases/axes.hpp"
#include "plan/options.hpp"
#include "parse_alone.hpp"
#include "plan/benchmark_flags.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <regex>
#include <set>
#include <string>

namespace heapbench {
namespace {

Options parse(std::vector<const char*> args) {
  args.insert(args.begin(), "heapbench");
  return parse_options(static_cast<int>(args.size()), args.data());
}

Options parse_with(InputReaders readers, std::vector<const char*> args) {
  args.insert(args.begin(), "heapbench");
  return parse_options(static_cast<int>(args.size()), args.data(), {}, std::move(readers));
}

std::string refusal(std::vector<const char*> args) {
  try {
    parse(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// What heapbench --help prints, listing `subcommands`.
std::string help(const SubcommandList& subcommands = {}) {
  const char* argv[] = {"heapbench", "--help"};
  return parse_options(2, argv, subcommands).help_text;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

TEST(Options, DefaultsAreTheBuiltInSweep) {
  const Options o = parse({});
  ASSERT_EQ(o.sweeps.size(), default_sweep().size());
  EXPECT_EQ(o.sweeps[0].sizes, default_sweep()[0].sizes);
  EXPECT_GT(o.sweeps[0].max_demand_fraction, 0.0);
  EXPECT_EQ(o.device, 0);
  EXPECT_FALSE(o.out.has_value());
}

TEST(Options, AxisFlagsReplaceAxesAndKeepEveryPoint) {
  const Options o = parse({"--sizes=16,1K,4K", "--threads=32,100000", "--heaps=8M,1G"});
  for (const Sweep& s : o.sweeps) {
    EXPECT_EQ(s.sizes, (std::vector<std::uint64_t>{16, 1024, 4096}));
    EXPECT_EQ(s.values("threads"), (std::vector<std::uint64_t>{32, 100000}));
    EXPECT_EQ(s.heaps, (std::vector<std::uint64_t>{8 * kMiB, 1024 * kMiB}));
    EXPECT_EQ(s.max_demand_fraction, 0.0);
  }
  EXPECT_EQ(parse({"--sizes=16", "--max-demand-fraction=0.25"}).sweeps[1].max_demand_fraction, 0.25);
}

// --axis KEY=VALUES is its axis's flag (issue 54, item 2): the same sweep, the same refusals.
TEST(Options, AxisByKeyIsItsFlag) {
  const std::vector<std::vector<const char*>> pairs[] = {
      {{"--axis=threads=32,100000", "--axis", "size=16,1K", "--axis=malloc_heap=8M,1G"},
       {"--threads=32,100000", "--sizes=16,1K", "--heaps=8M,1G"}},
      {{"--axis=pattern=per_warp,churn", "--axis=api=bump,aligned", "--axis=align=64,4K"},
       {"--patterns=per_warp,churn", "--apis=bump,aligned", "--aligns=64,4K"}},
      {{"--axis=pattern=hash", "--axis=load_pct=50,200"}, {"--patterns=hash", "--load-pcts=50,200"}},
  };
  for (const auto& pair : pairs) {
    const Options a = parse(pair[0]), b = parse(pair[1]);
    ASSERT_EQ(a.sweeps.size(), b.sweeps.size());
    for (std::size_t i = 0; i < a.sweeps.size(); ++i) {
      EXPECT_EQ(a.sweeps[i].patterns, b.sweeps[i].patterns);
      EXPECT_EQ(a.sweeps[i].apis, b.sweeps[i].apis);
      EXPECT_EQ(a.sweeps[i].sizes, b.sweeps[i].sizes);
      EXPECT_EQ(a.sweeps[i].aligns, b.sweeps[i].aligns);
      EXPECT_EQ(a.sweeps[i].heaps, b.sweeps[i].heaps);
      EXPECT_EQ(a.sweeps[i].values("threads"), b.sweeps[i].values("threads"));
      EXPECT_EQ(a.sweeps[i].values("load_pct"), b.sweeps[i].values("load_pct"));
      EXPECT_EQ(a.sweeps[i].max_demand_fraction, b.sweeps[i].max_demand_fraction);
    }
  }
  EXPECT_EQ(refusal({"--axis=threads=0"}), refusal({"--threads=0"}));
  EXPECT_EQ(refusal({"--axis=writes=2"}), refusal({"--writes=2"}));
  EXPECT_NE(refusal({"--writes=0,2"}).find("--writes=0,2: '2' is not 0 or 1"), std::string::npos) << refusal({"--writes=0,2"});
  EXPECT_EQ(refusal({"--axis=threads"}), "--axis=threads: give KEY=VALUES (e.g. --axis threads=1K,1M)");
  EXPECT_EQ(refusal({"--axis=threads="}), "--axis=threads=: give KEY=VALUES (e.g. --axis threads=1K,1M)");
  // Every key of the axis table but trace (its value comes from --trace=FILE), in the table's order.
  std::vector<std::string> keys;
  for (const AxisDecl& a : axis_table()) {
    if (a.key != "trace") keys.emplace_back(a.key);
  }
  EXPECT_EQ(refusal({"--axis=thread=1"}), fmt::format("--axis=thread=1: no axis 'thread'; --axis takes {}", fmt::join(keys, ", ")));
  EXPECT_NE(refusal({"--axis=thread=1"}).find("pattern, api, size, size_min, align, graph, threads, load_pct"),
            std::string::npos);
  EXPECT_NE(refusal({"--axis=trace=x"}).find("--axis=trace=x: a trace comes from --trace=FILE"), std::string::npos);
  EXPECT_EQ(refusal({"--axis=threads=1", "--threads=2"}), "--axis=threads=1 and --threads: the same axis twice; give one");
  EXPECT_EQ(refusal({"--axis=threads=1", "--axis=threads=2"}),
            "--axis=threads=2: its flag --threads is given by another --axis already");
  EXPECT_EQ(refusal({"--axis=malloc_heap=8M", "--axis=printf_fifo=1M"}),
            "--axis=printf_fifo=1M: its flag --heaps is given by another --axis already");
}

TEST(Options, PatternApiAndAlignFlagsReplaceTheirAxes) {
  const Options o = parse({"--patterns=per_warp,churn", "--apis=bump,aligned", "--aligns=64,4K"});
  for (const Sweep& s : o.sweeps) {
    EXPECT_EQ(s.patterns, (std::vector<std::string>{"per_warp", "churn"}));
    EXPECT_EQ(s.apis, (std::vector<std::string>{"bump", "aligned"}));
    EXPECT_EQ(s.aligns, (std::vector<std::uint64_t>{64, 4096}));
  }
  EXPECT_GT(o.sweeps[0].max_demand_fraction, 0.0) << "naming patterns keeps the default grid and its pruning";
}

TEST(Options, GoogleBenchmarkFlagsPassThroughInOrder) {
  const Options o = parse({"--benchmark_filter=^per_thread/", "--sizes=64", "--benchmark_repetitions=3"});
  ASSERT_GE(o.benchmark_args.size(), 3u);
  EXPECT_EQ(o.benchmark_args.front(), "heapbench");
  EXPECT_TRUE(has(o.benchmark_args, "--benchmark_filter=^per_thread/"));
  EXPECT_TRUE(has(o.benchmark_args, "--benchmark_repetitions=3"));
  EXPECT_FALSE(has(o.benchmark_args, "--sizes=64"));
}

TEST(Options, OneGoogleBenchmarkIterationPerCase) {
  // heapbench runs rounds by its own stopping rule inside one iteration, so it
  // passes exactly one min-time flag and refuses a user's.
  const Options o = parse({});
  EXPECT_EQ(std::count_if(o.benchmark_args.begin(), o.benchmark_args.end(),
                          [](const std::string& a) { return a.rfind("--benchmark_min_time=", 0) == 0; }),
            1);
  EXPECT_THROW(parse({"--benchmark_min_time=2"}), UsageError);
  EXPECT_THROW(parse({"--benchmark_min_warmup_time=2"}), UsageError);
  EXPECT_THROW(parse({"--benchmark_min_time=0.5s"}), UsageError);
  EXPECT_THROW(parse({"--benchmark_min_warmup_time=1"}), UsageError);
}

TEST(Options, StoppingRuleFlags) {
  const Options d = parse({});
  EXPECT_DOUBLE_EQ(d.rule.max_noise, StoppingRule{}.max_noise);
  const Options o = parse({"--max-noise=2", "--min-rounds=7", "--max-time=1.5"});
  EXPECT_DOUBLE_EQ(o.rule.max_noise, 0.02);
  EXPECT_EQ(o.rule.min_rounds, 7);
  EXPECT_DOUBLE_EQ(o.rule.max_time_s, 1.5);
  for (const char* bad : {"--max-noise=0", "--max-noise=-1", "--max-noise=100", "--max-noise=abc", "--min-rounds=0",
                          "--min-rounds=-3", "--max-time=0", "--max-time=-1", "--max-time=1e9", "--sweep=fast"}) {
    EXPECT_THROW(parse({bad}), UsageError) << bad;
  }
}

TEST(Options, QuickSweepCoversEveryPatternAndApiOnce) {
  const Options q = parse({"--sweep=quick"});
  EXPECT_EQ(q.sweep, "quick");
  const auto cases = plan_cases(q.sweeps);
  for (auto p : kPatterns) {
    if (find_pattern_traits(p)->own_sweep) continue;  // a sweep of its own (--sweep=size_map, workloads)
    for (auto a : built_api_names()) {
      if (!supported(p, a)) continue;
      const auto n = std::count_if(cases.begin(), cases.end(),
                                   [&](const Case& c) { return c.pattern_name() == p && c.api_name() == a; });
      EXPECT_EQ(n, 1) << p << "/" << a;
    }
  }
  EXPECT_LT(cases.size(), plan_cases(default_sweep()).size() / 4);
}

TEST(Options, SizeMapSweepIsTheSizeMapPatternAndTakesAxisFlags) {
  const Options m = parse({"--sweep=size_map"});
  EXPECT_EQ(m.sweep, "size_map");
  for (const Case& c : plan_cases(m.sweeps)) EXPECT_EQ(c.pattern_name(), "size_map");
  const Options small = parse({"--sweep=size_map", "--sizes=16,32", "--heaps=64M"});
  EXPECT_EQ(plan_cases(small.sweeps).size(), 2u);
  EXPECT_THROW(parse({"--sweep=sizemap"}), UsageError);
}

TEST(Options, OutputAndListingAreHeapbenchs) {
  const Options o = parse({"--benchmark_out=r.json", "--benchmark_list_tests"});
  ASSERT_TRUE(o.out.has_value());
  EXPECT_EQ(*o.out, "r.json");
  EXPECT_TRUE(o.list_tests);
  EXPECT_FALSE(has(o.benchmark_args, "--benchmark_out=r.json"));
  EXPECT_TRUE(has(o.benchmark_args, "--benchmark_list_tests=true"));
  EXPECT_FALSE(parse({"--benchmark_list_tests=false"}).list_tests);
}

// Every row of the axis table (axes.hpp) with a flag has it: the values land
// in every part of the sweep, its demand rule holds, and one above the row's
// limit is refused.
TEST(Options, EveryAxisFlagIsMadeFromItsRow) {
  std::set<std::string> flagged;
  for (const AxisDecl* a : flag_axes()) {
    flagged.emplace(a->key);
    const AxisFlag& f = a->flag;
    const std::string value = a->text() ? std::string(f.known().front()) : a->kind == ValueKind::switch01 ? "1" : "64";
    const std::string given = fmt::format("{}={}", f.name, value);
    const Options o = parse({given.c_str()});
    ASSERT_FALSE(o.sweeps.empty()) << given;
    for (const Sweep& s : o.sweeps) {
      if (a->text()) {
        EXPECT_EQ(s.names(a->key), std::vector<std::string>{value}) << given;
      } else {
        EXPECT_EQ(s.values(*a), std::vector<std::uint64_t>{a->kind == ValueKind::whole_mib ? 64 * kMiB : std::stoull(value)})
            << given;
      }
    }
    EXPECT_EQ(o.sweeps.front().max_demand_fraction == 0.0, f.demand) << given << " keeps every point";
    if (f.max == 0) continue;
    const std::string over = fmt::format("{}={}", f.name, f.max + 1);
    try {
      parse({over.c_str()});
      ADD_FAILURE() << "accepted " << over;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(over), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(f.max_means), std::string::npos) << e.what();
    }
  }
  // By name, so that a row that loses its flag (or a table emptied) fails here (issue 54: this
  // compared the count with itself, through swept_axes()).
  for (const char* key : {"pattern", "api", "size", "size_min", "align", "graph", "threads", "load_pct", "writes",
                          "malloc_heap"}) {
    EXPECT_TRUE(flagged.count(key)) << key;
  }
  EXPECT_EQ(find_flag_axis("--heaps"), find_axis("malloc_heap")) << "printf_fifo shares it";
  EXPECT_EQ(find_axis("printf_fifo")->flag.name, "--heaps");
}

TEST(Options, BadValuesAreRefusedNamingTheFlagAndValue) {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {"--sizes=12Q", "12Q"},        {"--sizes=-1", "-1"},          {"--sizes=0", "0"},
      {"--threads=0", "0"},          {"--threads=1G", "threads"},   {"--heaps=1000K", "MiB"},
      {"--heaps=", "--heaps"},       {"--device=-1", "--device"},   {"--kernel-budget-ms=0", "kernel-budget"},
      {"--kernel-budget-ms=abc", "abc"}, {"--max-demand-fraction=-1", "max-demand"}, {"--benchmark_out=", "benchmark_out"},
      {"--aligns=48", "power of two"}, {"--aligns=0", "'0'"},     {"--patterns=per_grid", "per_grid"},
      {"--apis=malloc,calloc", "calloc"}, {"--apis=", "--apis"},
      {"--devices=0,0", "twice"},         {"--devices=x", "'x'"},        {"--devices=-1", "'-1'"},
      {"--case-timeout=-1", "--case-timeout=-1"}, {"--case-timeout=nan", "case-timeout"},
  };
  try {
    parse({"--patterns=printf", "--sizes=8,12"});
    ADD_FAILURE() << "accepted printf with 12 bytes of arguments";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("12 is not one"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(parse({"--sizes=12"})) << "printf's part drops sizes it cannot take when printf was not named";
  for (const auto& [arg, needle] : bad) {
    try {
      parse({arg});
      ADD_FAILURE() << "accepted " << arg;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << arg << " -> " << e.what();
    }
  }
}

TEST(Options, DevicesAndIsolation) {
  EXPECT_EQ(parse({"--devices=0,1"}).devices, (std::vector<int>{0, 1}));
  EXPECT_EQ(parse({"--devices=all"}).devices, (std::vector<int>{-1}));
  EXPECT_TRUE(parse({"--isolate"}).isolate);
  EXPECT_FALSE(parse({}).isolate) << "nothing to merge into without a results file";
  EXPECT_TRUE(parse({"--benchmark_out=r.json"}).isolate) << "isolation is the default when results are written";
  EXPECT_FALSE(parse({"--benchmark_out=r.json", "--no-isolate"}).isolate);
  EXPECT_FALSE(parse({"--benchmark_out=r.json", "--profile"}).isolate) << "one process under a profiler";
  EXPECT_TRUE(parse({"--benchmark_out=r.json", "--profile", "--isolate"}).isolate);
  EXPECT_THROW(parse({"--isolate", "--no-isolate"}), UsageError);
  EXPECT_EQ(parse({"--sizes=64", "--isolate"}).raw_args, (std::vector<std::string>{"--sizes=64", "--isolate"}));
}

// An API the configured toolkit cannot build is refused with the reason, and
// --help says so; where it is built it is accepted and --help is silent. Which
// branch runs depends on the toolkit (scripts/toolkits builds both).
TEST(Options, ApisTheToolkitCannotBuildAreRefusedSayingWhy) {
  const std::string h = help();
  for (const char* api : {"cuda_std_aligned", "malloc_nvfunction"}) {
    const std::string why = not_built_reason(api);
    const std::string arg = std::string("--apis=malloc,") + api;
    if (is_api(api)) {
      EXPECT_EQ(why, "") << api;
      EXPECT_NO_THROW(parse({arg.c_str()})) << api;
      EXPECT_EQ(h.find(std::string(api) + " not built"), std::string::npos) << api;
      EXPECT_EQ(h.find(std::string(api) + ",bump_nvfunction not built"), std::string::npos) << api;
      continue;
    }
    EXPECT_NE(why, "") << api << " is neither built nor explained";
    try {
      parse({arg.c_str()});
      ADD_FAILURE() << "accepted " << arg;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("not built in: " + why), std::string::npos) << e.what();
    }
    EXPECT_NE(h.find(" not built: " + why), std::string::npos) << h;
    EXPECT_NE(h.find(api), std::string::npos) << h;
  }
  EXPECT_EQ(is_api("cuda_std_aligned"), HEAPBENCH_HAVE_CUDA_STD_ALIGNED == 1);
#if !HEAPBENCH_HAVE_CUDA_STD_ALIGNED
  EXPECT_NE(not_built_reason("cuda_std_aligned").find("CCCL"), std::string::npos);
#endif
}

TEST(Options, AnEmptyValueDoesNotSwallowTheNextArgument) {
  // "--benchmark_out= --sizes=64" (an unset shell variable) wrote results to a
  // file named "--sizes=64" and dropped --sizes.
  for (const std::vector<const char*>& args : {std::vector<const char*>{"--benchmark_out=", "--sizes=64"},
                                               std::vector<const char*>{"--patterns=", "--apis=malloc"}}) {
    try {
      parse(args);
      ADD_FAILURE() << "accepted " << args[0];
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(args[0]) + ": empty value"), std::string::npos) << e.what();
    }
  }
}

TEST(Options, DevicesAndDeviceTogetherAreRefused) {
  try {
    parse({"--devices=0,1", "--device=1"});
    ADD_FAILURE() << "--device was ignored silently";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--device=1"), std::string::npos) << e.what();
  }
}

TEST(Options, AChildParsesNoFlagOfItsParents) {
  // Issue 54, item 1: a child got its parent's whole command line and planned the sweep and read
  // --trace and --graph again. Its line is now the plan, its results file and the file its cases read.
  InputReaders r;
  r.trace = [](const std::string&) -> TraceFacts { throw std::runtime_error("a child read the trace"); };
  const Options o = parse_with(r, {"--child-plan=g/device1_heap8_0.plan", "--benchmark_out=g/device1_heap8_0.json",
                                   "--child-input=some/particles.hbt"});
  EXPECT_TRUE(o.child());
  EXPECT_EQ(o.child_plan, "g/device1_heap8_0.plan");
  EXPECT_EQ(o.child_input, "some/particles.hbt");
  EXPECT_EQ(o.out.value_or(""), "g/device1_heap8_0.json");
  EXPECT_TRUE(o.sweeps.empty()) << "nothing planned: the cases are the plan's";
  for (const char* flag : {"--trace=some/particles.hbt", "--sizes=64", "--device=1", "--benchmark_repetitions=3"}) {
    const std::string why = refusal({"--child-plan=p.plan", "--benchmark_out=c.json", flag});
    EXPECT_NE(why.find(std::string(flag) + ": a child of isolation takes its run from its plan"), std::string::npos)
        << flag << ": " << why;
  }
  EXPECT_NE(refusal({"--child-plan=p.plan"}).find("--benchmark_out"), std::string::npos);
  EXPECT_NE(refusal({"--child-input=t.hbt"}).find("internal flag"), std::string::npos);
}

TEST(Options, NamingPatternsBringsNoAxesOfOtherPatterns) {
  // printf's part has 8-byte sizes and 1 MiB FIFOs; they must not reach per_thread.
  const Options o = parse({"--patterns=per_thread", "--apis=malloc"});
  for (const Case& c : plan_cases(o.sweeps)) {
    EXPECT_NE(c.size, 8u) << case_name(c);
    EXPECT_GE(c.malloc_heap(), 4 * kMiB) << case_name(c);
  }
  // The parts that measure per_thread keep their axes.
  bool failure_curve = false;
  for (const Case& c : plan_cases(o.sweeps)) failure_curve |= c.malloc_heap() == 6 * kMiB;
  EXPECT_TRUE(failure_curve);
  // And printf by itself keeps its own.
  const Options p = parse({"--patterns=printf"});
  EXPECT_FALSE(plan_cases(p.sweeps).empty());
  for (const Case& c : plan_cases(p.sweeps)) EXPECT_EQ(c.pattern_name(), "printf");
}

TEST(Options, AMistypedFlagPatternOrApiGetsTheClosestName) {
  EXPECT_NE(refusal({"--sizs=64"}).find("did you mean '--sizes'?"), std::string::npos) << refusal({"--sizs=64"});
  EXPECT_NE(refusal({"--benchmark_filtr=x"}).find("did you mean '--benchmark_filter'?"), std::string::npos);
  EXPECT_NE(refusal({"--kernel_budget_ms=9"}).find("did you mean '--kernel-budget-ms'?"), std::string::npos);
  EXPECT_NE(refusal({"--patterns=per_thred"}).find("did you mean 'per_thread'?"), std::string::npos);
  EXPECT_NE(refusal({"--apis=malocc"}).find("did you mean 'malloc'?"), std::string::npos);
  // Nothing close: no guess.
  const std::string far = refusal({"--frobnicate=1"});
  EXPECT_NE(far.find("--frobnicate=1: unknown flag"), std::string::npos) << far;
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
  // The internal --child-plan is never offered.
  EXPECT_EQ(refusal({"--child-plans=x"}).find("--child-plan'"), std::string::npos);
}

TEST(Options, AHeapWithoutAUnitIsMiBAsCaseNamesPrintIt) {
  // Issue 36 (7): --heaps=8 meant 8 bytes (refused) while case names print heap:8 in MiB.
  for (const Sweep& s : parse({"--heaps=8,64M,1G"}).sweeps) {
    EXPECT_EQ(s.heaps, (std::vector<std::uint64_t>{8 * kMiB, 64 * kMiB, 1024 * kMiB}));
  }
  EXPECT_NE(refusal({"--heaps=1536K"}).find("not a whole number of MiB"), std::string::npos);
  EXPECT_NE(refusal({"--heaps=99999999999999"}).find("too large"), std::string::npos) << "x 2^20 overflows";
}

TEST(Options, AnAlignmentNoApiTakesOrNoHeapHoldsIsRefused) {
  // Issue 36 (7): --apis=malloc --aligns=4096 silently measured malloc unaligned; --aligns=8G was taken.
  const std::string unaligned = refusal({"--apis=malloc", "--aligns=4096"});
  EXPECT_NE(unaligned.find("--aligns=4096: none of the APIs asked for (malloc) takes an alignment"), std::string::npos)
      << unaligned;
  EXPECT_NE(unaligned.find("aligned"), std::string::npos) << "it names those that do";
  const std::string huge = refusal({"--aligns=8G"});
  EXPECT_NE(huge.find("--aligns=8G: 8G is larger than the largest heap"), std::string::npos) << huge;
  EXPECT_NE(refusal({"--apis=aligned", "--heaps=8M", "--aligns=16M"}).find("largest heap it would be asked on (8M)"),
            std::string::npos);
  EXPECT_EQ(refusal({"--apis=malloc,aligned", "--aligns=4096"}), "") << "it applies to the APIs that take one";
  EXPECT_EQ(refusal({"--apis=aligned", "--heaps=8M", "--aligns=8M"}), "");
}

TEST(Options, ARepeatedFlagIsRefusedWithEveryValue) {
  // Issue 35 (E16): "--sizes: At Most 1 required but received 2", the values unnamed.
  const std::string why = refusal({"--sizes=16", "--threads=32", "--sizes=32"});
  EXPECT_NE(why.find("--sizes=16 and --sizes=32: given 2 times"), std::string::npos) << why;
  // --device and --benchmark_out too: a child of isolation once got them appended to its parent's flags.
  EXPECT_NE(refusal({"--device=0", "--device=1"}).find("--device=0 and --device=1: given 2 times"), std::string::npos);
  EXPECT_NE(refusal({"--benchmark_out=a.json", "--benchmark_out=b.json"}).find("given 2 times"), std::string::npos);
}

TEST(Options, ValuesAreEchoedAsTyped) {
  // Issue 35 (E16): 1e+20 for 1e20, "inf" for 1e999.
  EXPECT_NE(refusal({"--max-noise=1e20"}).find("--max-noise=1e20:"), std::string::npos) << refusal({"--max-noise=1e20"});
  EXPECT_NE(refusal({"--max-time=1e999"}).find("--max-time=1e999:"), std::string::npos);
  EXPECT_NE(refusal({"--min-rounds=-16"}).find("--min-rounds=-16:"), std::string::npos) << refusal({"--min-rounds=-16"});
  EXPECT_NE(refusal({"--device=-16"}).find("--device=-16:"), std::string::npos);
  EXPECT_NE(refusal({"--profile-iterations=-16"}).find("--profile-iterations=-16:"), std::string::npos);
}

TEST(Options, HelpAndVersionStillJudgeTheValues) {
  // Issue 36 (7): --help --sizes=0 printed the help and exited 0.
  EXPECT_NE(refusal({"--help", "--sizes=0"}).find("--sizes=0"), std::string::npos);
  EXPECT_NE(refusal({"--version", "--heaps=1536K"}).find("--heaps=1536K"), std::string::npos);
  EXPECT_TRUE(parse({"--help", "--no-such-flag"}).help) << "the flags beside it are not judged";
}

TEST(Options, StrayWordsAndRefusedGoogleBenchmarkFlagsAreRefused) {
  EXPECT_NE(refusal({"--benchmark_filter", "x"}).find("after '='"), std::string::npos);
  EXPECT_NE(refusal({"--sizes=64", "advise"}).find("'advise': unexpected argument"), std::string::npos);
  EXPECT_NE(refusal({"--benchmark_enable_random_interleaving=true"}).find("heap-major"), std::string::npos);
  EXPECT_NE(refusal({"--benchmark_time_unit=us"}).find("refused"), std::string::npos);
  EXPECT_EQ(refusal({"--benchmark_enable_random_interleaving=false"}), "");
  EXPECT_EQ(refusal({"--benchmark_color=false", "--v=1", "--benchmark_context=a=b"}), "");
}

TEST(Options, HelpAndVersionNeedNothingElse) {
  EXPECT_TRUE(parse({"--version"}).version);
  EXPECT_TRUE(parse({"--help", "--frobnicate"}).help) << "--help answers whatever else is there";
}

TEST(Options, HelpListsSubcommandsAndGoogleBenchmarksFlagsAsHeapbenchTreatsThem) {
  const std::string h = help({{"advise", "heap-size advice"}});
  EXPECT_NE(h.find("advise"), std::string::npos);
  EXPECT_NE(h.find("heap-size advice"), std::string::npos);
  for (const auto& f : google_benchmark_flags()) EXPECT_NE(h.find(std::string(f.name)), std::string::npos) << f.name;
  // What --help once claimed and heapbench refuses.
  EXPECT_EQ(h.find("also accepted"), std::string::npos);
  EXPECT_EQ(h.find("<json|console|csv>"), std::string::npos);
  EXPECT_EQ(h.find("about a minute"), std::string::npos);
  EXPECT_NE(h.find("about 30 s on an H200"), std::string::npos);
}

TEST(Options, CaseTimeoutNeedsAChildProcessAndDefaultsFromMaxTime) {
  // Only a parent can stop a case that never returns: in one process the flag
  // could do nothing, so it is refused rather than ignored.
  EXPECT_NE(refusal({"--case-timeout=30"}).find("child process"), std::string::npos);
  EXPECT_NE(refusal({"--case-timeout=30", "--benchmark_out=r.json", "--no-isolate"}).find("child process"),
            std::string::npos);
  const Options given = parse({"--case-timeout=30", "--benchmark_out=r.json"});
  EXPECT_TRUE(given.isolate);
  EXPECT_DOUBLE_EQ(case_timeout_seconds(given), 30.0);
  EXPECT_DOUBLE_EQ(case_timeout_seconds(parse({"--case-timeout=0", "--isolate", "--benchmark_out=r.json"})), 0.0);
  EXPECT_DOUBLE_EQ(case_timeout_seconds(parse({"--benchmark_out=r.json"})), 120.0 + 4 * StoppingRule{}.max_time_s);
  EXPECT_DOUBLE_EQ(case_timeout_seconds(parse({"--benchmark_out=r.json", "--max-time=10"})), 160.0);
}

TEST(Options, HelpNamesEveryHeapbenchFlag) {
  const std::string h = help();
  for (const char* flag : {"--isolate", "--no-isolate", "--devices", "--profile", "--patterns", "--apis", "--aligns", "--sizes", "--threads", "--heaps", "--device", "--kernel-budget-ms", "--max-demand-fraction", "--case-timeout"}) {
    EXPECT_NE(h.find(flag), std::string::npos) << flag;
  }
}

// The flags a --help text lists, each once: the first name of every option
// line ("  -h,--help", "  --sizes TEXT"), up to Google Benchmark's flags.
std::vector<std::string> listed_flags(const std::string& help) {
  const std::string own = help.substr(0, help.find("\n\nGoogle Benchmark's flags, passed on"));
  const std::regex option_line(R"(\n  (?:-\w,)?(--[\w-]+))");
  std::vector<std::string> flags;
  for (auto m = std::sregex_iterator(own.begin(), own.end(), option_line); m != std::sregex_iterator(); ++m) {
    flags.push_back((*m)[1]);
  }
  return flags;
}

// Whether `parse` takes `flag` given alone (its value missing or wrong is fine:
// only a flag it does not know is refused as unknown).
bool takes(const std::function<void(const char*)>& parse, const std::string& flag) {
  try {
    parse(flag.c_str());
  } catch (const UsageError& e) {
    const std::string why = e.what();
    return why.find("unknown flag") == std::string::npos && why.find("not expected") == std::string::npos;
  }
  return true;
}

// Issue 54: heapbench, advise and check each built their command line twice,
// once to parse and once for --help (and the two descriptions differed). --help
// is now the parser's answer, printed from the app that parsed: every flag it
// lists is one the parser takes, and its first line is the one description.
TEST(Help, IsWhatTheParserAnswersAndListsOnlyFlagsItTakes) {
  const Options run = parse({"--help"});
  EXPECT_EQ(parse({"--sizes=64"}).help_text, "") << "help_text is --help's answer only";
  EXPECT_EQ(run.help_text.rfind("heapbench: throughput and limits of CUDA's device heap\nUsage: heapbench [OPTIONS]", 0), 0u)
      << run.help_text.substr(0, 200);
  const char* advise_argv[] = {"advise", "--help"};
  const std::string advise = parse_advise_options(2, advise_argv).help_text;
  EXPECT_EQ(advise.rfind("heapbench advise: the smallest cudaLimitMallocHeapSize for a workload, by bisection over "
                         "real runs\nUsage: heapbench advise [OPTIONS]",
                         0),
            0u)
      << advise.substr(0, 200);
  const std::vector<std::string> known_apis = {"malloc"};
  const char* check_argv[] = {"check", "--help"};
  const std::string check = check::parse_check_options(2, check_argv, known_apis).help_text;
  EXPECT_EQ(check.rfind("heapbench check: a conformance verdict for device allocators (docs/check.md)\n"
                        "Usage: heapbench check [OPTIONS]",
                        0),
            0u)
      << check.substr(0, 200);

  const std::vector<std::pair<std::string, std::function<void(const char*)>>> commands = {
      {run.help_text, [](const char* flag) { parse({flag}); }},
      {advise, [](const char* flag) {
         const char* argv[] = {"advise", flag};
         parse_advise_options(2, argv);
       }},
      {check, [&](const char* flag) {
         const char* argv[] = {"check", flag};
         check::parse_check_options(2, argv, known_apis);
       }}};
  for (const auto& [help, parser] : commands) {
    const std::vector<std::string> flags = listed_flags(help);
    EXPECT_GE(flags.size(), 10u) << help;
    for (const std::string& flag : flags) EXPECT_TRUE(takes(parser, flag)) << flag << " is listed by:\n" << help;
  }
}

}  // namespace
}  // namespace heapbench

namespace heapbench {
namespace {

// Issue 54: plan/ reads --trace and --graph files only through the readers the
// program hands it (plan/input_files.hpp; the program's are bench/inputs.cpp).
TEST(OptionsInputs, ATraceMakesTheReplaySweepFromWhatItsReaderSays) {
  InputReaders r;
  std::string asked;
  r.trace = [&](const std::string& path) {
    asked = path;
    TraceFacts f;
    f.name = "particles";
    f.content_hash = "00000000000000aa";
    f.max_size = 48;
    f.max_threads = 4096;
    f.heap_bytes = 20u << 20;
    return f;
  };
  const Options o = parse_with(r, {"--trace=some/particles.hbt"});
  EXPECT_EQ(asked, "some/particles.hbt");
  ASSERT_EQ(o.sweeps.size(), 1u);
  const Sweep& s = o.sweeps[0];
  EXPECT_EQ(s.patterns, std::vector<std::string>{"replay"});
  EXPECT_EQ(s.trace, "particles");
  EXPECT_EQ(s.input_hash, "00000000000000aa");
  EXPECT_EQ(s.sizes, std::vector<std::uint64_t>{48});
  EXPECT_EQ(s.values("threads"), std::vector<std::uint64_t>{4096});
  EXPECT_EQ(s.heaps, std::vector<std::uint64_t>{20ull << 20});
}

TEST(OptionsInputs, AReaderThatRefusesIsOneLineNamingTheFlagAndTheFile) {
  InputReaders r;
  r.graph = [](const std::string&) -> GraphFacts { throw std::runtime_error("line 3: not a number"); };
  try {
    parse_with(r, {"--sweep=workloads", "--graph=g.mtx"});
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--graph=g.mtx: line 3: not a number");
  }
}

TEST(OptionsInputs, WithoutReadersTheFlagsAreRefused) {
  EXPECT_THROW(parse_with({}, {"--trace=t.hbt"}), UsageError);
  EXPECT_THROW(parse_with({}, {"--sweep=workloads", "--graph=g.mtx"}), UsageError);
}

}  // namespace
}  // namespace heapbench
