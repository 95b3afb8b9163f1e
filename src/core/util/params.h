// The one registry of SMD_* configuration variables: each is declared once
// (params.cc) with its type, default and documentation. Values are read
// from the environment when asked; explicit API fields override them.
// `smd-info params` prints the table; a test checks README lists them all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace smd {

struct ParamDef {
  const char *name;           // "SMD_TIMEOUT"
  const char *type;           // "string", "int", "seconds", "bool", "list"
  const char *default_value;  // as text; "" = unset
  const char *doc;            // one sentence
};

// Every variable smd reads, in documentation order.
const std::vector<ParamDef> &all_params();

// The registered definition of `name`, or nullptr.
const ParamDef *find_param(const char *name);

// SMD_* variables read outside this registry, never warned about as
// unknown: smd's scripts, tests and bindings' loaders. A name ending in
// '*' stands for every name with that prefix.
struct ForeignParam {
  const char *name;    // "SMD_LIBRARY", "SMD_TEST_*"
  const char *reader;  // who reads it: "python binding", "scripts"
};
const std::vector<ForeignParam> &foreign_params();
bool is_foreign_param(const std::string &name);

// Where a variable's value comes from: the registered default, or the
// environment (set and non-empty).
enum class ParamOrigin { kDefault, kEnvironment };
ParamOrigin param_origin(const char *name);
const char *param_origin_name(ParamOrigin origin);  // "default", "environment"

// The raw environment value, or nullopt if unset or empty. Asking for a
// name that is not in the registry is a bug and fails loudly in debug.
std::optional<std::string> param_env(const char *name);

// Value from the environment, else the registered default.
std::string param_string(const char *name);
// Parse as integer; a malformed value throws SMD_ERR_INVALID_ARGUMENT
// naming the variable.
int64_t param_int(const char *name);
// Parse as seconds (fractions allowed); returns milliseconds.
int64_t param_seconds_ms(const char *name);
// "1/0/yes/no/true/false/on/off".
bool param_bool(const char *name);

}  // namespace smd
