#include "report/results_schema.hpp"

#include <string_view>

#include "cases/axes.hpp"
#include "cases/catalog.hpp"
#include "report/counter_units.hpp"

namespace heapbench {
namespace {

using J = nlohmann::ordered_json;

// What no declaration says: Google Benchmark's fields, the context, the
// structure of the declarations blocks. results_schema() fills in what the
// declarations do (the places left empty here): each counter's type, meaning
// and range, which counters an error result may carry, the axis_values object,
// and the enums of the counters' scales and the APIs' sources and call paths.
constexpr std::string_view kBase = R"json(
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://github.com/heapbench/heapbench/docs/results.schema.json",
  "title": "heapbench results file (heapbench_schema_version 1)",
  "description": "Google Benchmark's JSON (--benchmark_out) as heapbench writes it: the device, toolkit and heapbench's version in the context, each case's axes in axis_values, heapbench's counters as numbers, and the declarations of the counters and APIs (counters, apis; optional: files written before them lack them). docs/json.md describes every field.",
  "type": "object",
  "required": [
    "context",
    "benchmarks"
  ],
  "properties": {
    "context": {
      "$ref": "#/$defs/context"
    },
    "benchmarks": {
      "type": "array",
      "items": {
        "$ref": "#/$defs/entry"
      }
    },
    "counters": {
      "$ref": "#/$defs/counters"
    },
    "apis": {
      "$ref": "#/$defs/apis"
    }
  },
  "$defs": {
    "digits": {
      "type": "string",
      "pattern": "^[0-9]+$"
    },
    "decimal": {
      "type": "string",
      "pattern": "^[0-9]+(\\.[0-9]+)?(e[-+]?[0-9]+)?$"
    },
    "device": {
      "type": "object",
      "required": [
        "gpu_name",
        "gpu_index",
        "gpu_compute_capability",
        "gpu_sm_count",
        "gpu_memory_bytes",
        "cuda_driver_version",
        "cuda_runtime_version"
      ],
      "properties": {
        "gpu_name": {
          "type": "string",
          "minLength": 1
        },
        "gpu_index": {
          "$ref": "#/$defs/digits"
        },
        "gpu_compute_capability": {
          "type": "string",
          "pattern": "^[0-9]+\\.[0-9]+$"
        },
        "gpu_sm_count": {
          "$ref": "#/$defs/digits"
        },
        "gpu_sm_clock_khz": {
          "$ref": "#/$defs/digits"
        },
        "gpu_mem_clock_khz": {
          "$ref": "#/$defs/digits"
        },
        "gpu_memory_bytes": {
          "$ref": "#/$defs/digits"
        },
        "gpu_driver_release": {
          "type": "string",
          "pattern": "^[0-9][0-9.]*$"
        },
        "cuda_driver_version": {
          "$ref": "#/$defs/digits"
        },
        "cuda_runtime_version": {
          "$ref": "#/$defs/digits"
        },
        "gpu_pci_bus_id": {
          "type": "string",
          "pattern": "^[0-9a-fA-F]+:[0-9a-fA-F]+:[0-9a-fA-F]+\\.[0-9a-fA-F]+$"
        }
      }
    },
    "context": {
      "type": "object",
      "required": [
        "date",
        "heapbench_schema_version",
        "heapbench_version",
        "heapbench_git_commit"
      ],
      "properties": {
        "date": {
          "type": "string"
        },
        "heapbench_schema_version": {
          "const": "1"
        },
        "heapbench_version": {
          "type": "string",
          "pattern": "^[0-9]+\\.[0-9]+\\.[0-9]+"
        },
        "heapbench_git_commit": {
          "type": "string",
          "minLength": 1
        },
        "heapbench_command_line": {
          "type": "string",
          "minLength": 1,
          "description": "argv as given, each argument shell-quoted where it needs to be (shlex.split gives argv back)"
        },
        "heapbench_environment": {
          "type": "string",
          "description": "the variables that bear on a run that were set, NAME=value each, shell-quoted, sorted, space-separated (docs/json.md lists which)"
        },
        "heapbench_build_type": {
          "type": "string"
        },
        "heapbench_cxx_compiler": {
          "type": "string"
        },
        "heapbench_cxx_flags": {
          "type": "string"
        },
        "heapbench_cuda_compiler": {
          "type": "string"
        },
        "heapbench_cuda_flags": {
          "type": "string"
        },
        "heapbench_cuda_architectures": {
          "type": "string"
        },
        "heapbench_sweep": {
          "type": "string"
        },
        "heapbench_zoo": {
          "type": "string",
          "pattern": "^[A-Za-z0-9_]+@[0-9a-f]{40}(,[A-Za-z0-9_]+@[0-9a-f]{40})*$"
        },
        "heapbench_kernel_budget_s": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_max_noise": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_min_rounds": {
          "$ref": "#/$defs/digits"
        },
        "heapbench_max_time_s": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_wall_s": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_timed_s": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_timed_fraction": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_measured_fraction": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_budget_timed_s": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_budget_measuring_s": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_budget_between_s": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_budget_warmup_s": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_budget_setup_s": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_budget_heap_s": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_budget_probe_s": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_budget_meter_s": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_budget_case_rest_s": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_budget_outside_s": {
          "$ref": "#/$defs/decimal"
        },
        "library_build_type": {
          "enum": [
            "debug",
            "release"
          ]
        },
        "devices": {
          "type": "array",
          "minItems": 1,
          "items": {
            "$ref": "#/$defs/device"
          }
        },
        "heapbench_energy_device": {
          "type": "string",
          "minLength": 1,
          "description": "the NVML device energy was read from (its PCI bus id)"
        },
        "heapbench_energy_update_s": {
          "$ref": "#/$defs/decimal"
        },
        "heapbench_energy_absent": {
          "type": "string",
          "minLength": 1,
          "description": "why no energy was read"
        },
        "heapbench_results": {
          "const": "apps",
          "description": "apps: a file of real programs' runs that heapbench-apps wrote (docs/apps.md), every entry an app case"
        },
        "heapbench_app_runs": {
          "$ref": "#/$defs/digits",
          "description": "heapbench-apps: runs of each case, the median reported"
        }
      },
      "anyOf": [
        {
          "$ref": "#/$defs/device"
        },
        {
          "required": [
            "devices"
          ]
        },
        {
          "description": "a file heapbench-import-survey wrote from another harness's published results: the GPU's name and what that source states, no driver or memory it never recorded (docs/generations.md)",
          "required": [
            "gpu_name",
            "source_harness",
            "source_commit",
            "source_cuda_versions"
          ]
        },
        {
          "description": "a file heapbench-apps wrote (docs/apps.md): the GPU as nvidia-smi names it, which gives no SM count",
          "required": [
            "gpu_name",
            "gpu_driver_release",
            "heapbench_results"
          ]
        }
      ]
    },
    "axis_values": {},
    "app_axis_values": {},
    "entry": {
      "type": "object",
      "required": [
        "name",
        "run_name",
        "run_type",
        "time_unit"
      ],
      "properties": {
        "name": {
          "type": "string",
          "minLength": 1
        },
        "run_name": {
          "type": "string",
          "minLength": 1
        },
        "run_type": {
          "enum": [
            "iteration",
            "aggregate"
          ]
        },
        "aggregate_name": {
          "type": "string"
        },
        "time_unit": {
          "enum": [
            "ns",
            "us",
            "ms",
            "s"
          ]
        },
        "real_time": {
          "type": "number",
          "minimum": 0
        },
        "cpu_time": {
          "type": "number",
          "minimum": 0
        },
        "iterations": {
          "type": "integer",
          "minimum": 0
        },
        "repetitions": {
          "type": "integer",
          "minimum": 0
        },
        "repetition_index": {
          "type": "integer",
          "minimum": 0
        },
        "threads": {
          "type": "integer",
          "minimum": 1
        },
        "round_ns": {
          "type": "array",
          "minItems": 1,
          "items": {
            "type": "integer",
            "minimum": 0
          },
          "description": "GPU time of each kept round in ns, in order: every round, or every round_ns_stride-th once a case counted more than 128 (docs/json.md)"
        },
        "round_ns_stride": {
          "type": "integer",
          "minimum": 1,
          "description": "round_ns holds rounds 0, stride, 2 x stride, ... (1: every round)"
        },
        "gpu_index": {
          "type": "integer",
          "minimum": 0
        },
        "error_occurred": {
          "type": "boolean"
        },
        "error_message": {
          "type": "string",
          "minLength": 1
        },
        "axis_values": {
          "anyOf": [
            {
              "$ref": "#/$defs/axis_values"
            },
            {
              "$ref": "#/$defs/app_axis_values"
            }
          ],
          "description": "every entry of files written since the field was added (older files of schema 1 lack it: readers parse the name); an app case's (heapbench-apps) has its own"
        }
      },
      "additionalProperties": {
        "type": [
          "number",
          "string",
          "integer",
          "boolean"
        ]
      },
      "allOf": [
        {
          "description": "an error result carries its message and no figure",
          "if": {
            "required": [
              "error_occurred"
            ],
            "properties": {
              "error_occurred": {
                "const": true
              }
            }
          },
          "then": {
            "required": [
              "error_message"
            ],
            "not": {
              "anyOf": [
                {
                  "required": [
                    "round_ns"
                  ]
                }
              ]
            }
          },
          "else": {
            "required": [
              "real_time"
            ]
          }
        },
        {
          "description": "the counters of one run (aggregates hold statistics of them: means, deviations, CVs)",
          "if": {
            "properties": {
              "run_type": {
                "const": "iteration"
              }
            }
          },
          "then": {
            "properties": {}
          }
        }
      ]
    },
    "counters": {
      "description": "Every counter the writing program declares (docs/json.md, 'The declarations').",
      "type": "object",
      "additionalProperties": {
        "type": "object",
        "required": [
          "unit",
          "scale",
          "higher_is_better",
          "description"
        ],
        "properties": {
          "unit": {
            "type": "string"
          },
          "scale": {
            "enum": []
          },
          "higher_is_better": {
            "type": [
              "boolean",
              "null"
            ]
          },
          "description": {
            "type": "string",
            "minLength": 1
          },
          "headline": {
            "description": "present (true) on the rate a pattern's figures and comparisons are drawn in",
            "const": true
          }
        },
        "additionalProperties": false
      }
    },
    "apis": {
      "description": "Every API built into the writing program, by name (docs/json.md, 'The declarations').",
      "type": "object",
      "additionalProperties": {
        "type": "object",
        "required": [
          "order",
          "source",
          "baseline",
          "display_name",
          "takes_align",
          "frees",
          "call_path"
        ],
        "properties": {
          "order": {
            "type": "integer",
            "minimum": 0
          },
          "source": {
            "enum": []
          },
          "baseline": {
            "type": "boolean"
          },
          "display_name": {
            "type": "string",
            "minLength": 1
          },
          "takes_align": {
            "type": "boolean"
          },
          "frees": {
            "type": "boolean"
          },
          "call_path": {
            "enum": []
          },
          "inner": {
            "type": "string",
            "minLength": 1
          }
        }
      }
    }
  }
}
)json";

J range_of(const CounterDecl& d) {
  switch (d.range) {
    case CounterRange::any: return {{"type", "number"}};
    case CounterRange::fraction: return {{"type", "number"}, {"minimum", 0}, {"maximum", 1}};
    case CounterRange::at_most_one: return {{"type", "number"}, {"maximum", 1}};
    case CounterRange::flag: return {{"enum", {0, 1, 0.0, 1.0}}};
    case CounterRange::at_least_one: return {{"type", "number"}, {"minimum", 1}};
    case CounterRange::nonnegative: break;
  }
  return {{"type", "number"}, {"minimum", 0}};
}

J enum_of(const std::vector<std::string_view>& keys) {
  J out = J::array();
  for (std::string_view k : keys) out.push_back(k);
  return out;
}

// An app case's axes (heapbench-apps, docs/apps.md: a real program run on one allocator and
// heap): the program in the place of the pattern's shape, the API and the heap as a case's.
J app_axis_values_schema(const J& case_axes) {
  J properties = {
      {"pattern", {{"const", "app"}, {"description", "app: a real program's run (docs/apps.md)"}}},
      {"program", {{"type", "string"},
                   {"pattern", "^[A-Za-z0-9_-]+$"},
                   {"description", "the program (build/apps/<program>/<api>/<program>)"}}},
      {"api", case_axes.at("api")},
      {"malloc_heap", case_axes.at("malloc_heap")},
  };
  return J{{"type", "object"},
           {"required", {"pattern", "program", "api", "malloc_heap"}},
           {"properties", std::move(properties)},
           {"additionalProperties", false}};
}

}  // namespace

nlohmann::ordered_json results_schema() {
  J schema = J::parse(kBase);
  J& defs = schema["$defs"];
  defs["axis_values"] = axis_values_schema();
  defs["app_axis_values"] = app_axis_values_schema(defs["axis_values"]["properties"]);
  J& entry = defs["entry"];
  J& no_figure = entry["allOf"][0]["then"]["not"]["anyOf"];
  J& of_a_run = entry["allOf"][1]["then"]["properties"];
  for (const CounterDecl& d : counter_declarations()) {
    const std::string name(d.name);
    entry["properties"][name] = {{"type", "number"}, {"description", d.description}};
    of_a_run[name] = range_of(d);
    if (!d.kept_on_error) no_figure.push_back({{"required", {name}}});
  }
  defs["counters"]["additionalProperties"]["properties"]["scale"]["enum"] = enum_of(counter_scale_keys());
  J& api = defs["apis"]["additionalProperties"]["properties"];
  api["source"]["enum"] = enum_of(source_keys());
  api["call_path"]["enum"] = enum_of(call_path_keys());
  return schema;
}

}  // namespace heapbench
