#include "heapbench/axis_values.hpp"

#include <string>

namespace heapbench {

nlohmann::ordered_json axis_values(const Case& c) {
  nlohmann::ordered_json v = {{"pattern", c.pattern}, {"api", c.api}, {"size", c.size}};
  if (c.align != 0) v["align"] = c.align;
  v["threads"] = c.threads;
  v[std::string(limit_key(c.limit()))] = c.limit_bytes;
  return v;
}

}  // namespace heapbench
