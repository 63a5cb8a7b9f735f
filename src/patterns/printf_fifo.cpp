#include "patterns/printf_fifo.hpp"

#include <optional>

#include <charconv>
#include <vector>

#include "measure/iteration_result.hpp"

namespace heapbench {
namespace {

// Reads one unsigned decimal number at `p`, then expects `sep`. Advances `p`.
bool number(std::string_view& p, std::uint64_t& v, char sep) {
  const char* end = p.data() + p.size();
  auto [next, ec] = std::from_chars(p.data(), end, v);
  if (ec != std::errc() || next == end || *next != sep) return false;
  p.remove_prefix(static_cast<std::size_t>(next - p.data()) + 1);
  return true;
}

}  // namespace

namespace {

// The id of a whole line "hb <id> <id+1> ... <id+args-1>\n", or nullopt for any other.
std::optional<std::uint64_t> line_id(std::string_view line, std::uint64_t args) {
  if (args < 1 || line.size() <= 3 || line.substr(0, 3) != "hb " || line.back() != '\n') return std::nullopt;
  line.remove_prefix(3);
  std::uint64_t id = 0;
  for (std::uint64_t j = 0; j < args; ++j) {
    std::uint64_t v = 0;
    if (!number(line, v, j + 1 == args ? '\n' : ' ')) return std::nullopt;
    if (j == 0) id = v;
    if (v != id + j) return std::nullopt;
  }
  if (!line.empty()) return std::nullopt;
  return id;
}

}  // namespace

PrintfLines parse_printf_lines(std::string_view text, std::uint64_t calls, std::uint64_t args) {
  PrintfLines out;
  std::vector<bool> seen(calls, false);
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl == std::string_view::npos ? text.size() : nl + 1);
    text.remove_prefix(line.size());
    const std::optional<std::uint64_t> id = line_id(line, args);
    if (id && *id < calls && !seen[*id]) {
      seen[*id] = true;
      ++out.delivered;
    } else {
      ++out.garbled;
    }
  }
  return out;
}

PrintfFigures printf_figures(const PrintfRaw& r) {
  PrintfFigures f;
  const double calls = static_cast<double>(r.calls);
  const double delivered = static_cast<double>(r.lines.delivered);
  f.lines_delivered = delivered;
  f.lines_lost = r.calls > r.lines.delivered ? calls - delivered : 0.0;
  if (r.calls > 0) {
    f.loss_rate = f.lines_lost / calls;
    f.ret_documented = static_cast<double>(r.ret_documented) / calls;
  }
  if (r.kernel_seconds > 0) f.printf_per_s = calls / r.kernel_seconds;
  if (r.flush_seconds > 0) f.flush_lines_per_s = delivered / r.flush_seconds;
  if (f.lines_lost > 0 && delivered > 0) f.bytes_per_line = static_cast<double>(r.fifo_bytes) / delivered;
  return f;
}

namespace {

class Printf final : public Reducer {
 public:
  void add(const IterationResult& batch) override {
    const PrintfRaw* r = batch.observed.find<PrintfRaw>();
    if (r == nullptr) return;
    ++rounds_;
    sum_.calls += r->calls;
    sum_.args = r->args;
    sum_.ret_documented += r->ret_documented;
    sum_.ret_negative += r->ret_negative;
    if (r->ret_other != 0) sum_.ret_other = r->ret_other;
    sum_.lines.delivered += r->lines.delivered;
    garbled_ += r->lines.garbled;
    sum_.fifo_bytes = r->fifo_bytes;
    sum_.kernel_seconds += r->kernel_seconds;
    sum_.flush_seconds += r->flush_seconds;
    const PrintfFigures f = printf_figures(*r);
    if (f.bytes_per_line > 0) {
      bytes_per_line_ += f.bytes_per_line;
      ++full_rounds_;
    }
  }

  void write_counters(Counters& out) const override {
    if (rounds_ == 0) return;
    const PrintfFigures f = printf_figures(sum_);
    const double n = rounds_;
    out["printf_per_s"] = f.printf_per_s;
    out["lines_delivered"] = f.lines_delivered / n;
    out["lines_lost"] = f.lines_lost / n;
    out["lines_garbled"] = static_cast<double>(garbled_) / n;
    out["loss_rate"] = f.loss_rate;
    if (full_rounds_ > 0) out["bytes_per_line"] = bytes_per_line_ / full_rounds_;
    out["ret_documented"] = f.ret_documented;
    if (sum_.ret_other != 0) out["ret_other_value"] = static_cast<double>(sum_.ret_other);
    out["flush_lines_per_s"] = f.flush_lines_per_s;
    out["fifo_bytes"] = static_cast<double>(sum_.fifo_bytes);
  }

 private:
  int rounds_ = 0;
  PrintfRaw sum_;
  double bytes_per_line_ = 0;
  int full_rounds_ = 0;
  std::uint64_t garbled_ = 0;
};

}  // namespace

std::unique_ptr<Reducer> printf_reducer() { return std::make_unique<Printf>(); }

}  // namespace heapbench
