// The SMD_* environment checked against the parameter registry: names no
// part of smd reads (a typo like SMD_TRANSPORTT would otherwise pass
// silently) and values a variable cannot take. Warned about once per
// process, when the first world forms.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace smd {

// Edits (insert, delete, substitute, swap two neighbours) from a to b.
size_t edit_distance(const std::string &a, const std::string &b);

// The name of `known` closest to `name`, or "" when none is close enough
// to be a likely misspelling.
std::string closest_name(const std::string &name, const std::vector<std::string> &known);

// One message per problem among `env` ("NAME=VALUE" strings, as environ
// holds them). `plugin_params` lists the plugins' declared variables; it
// is called only when a name is neither registered nor foreign (loading
// every plugin to ask costs more than the check).
std::vector<std::string> environment_problems(
    const std::vector<std::string> &env,
    const std::function<std::vector<std::string>()> &plugin_params);

// environment_problems() over this process's environment, each logged as
// a warning; the first call only.
void warn_about_environment_once(const std::function<std::vector<std::string>()> &plugin_params);

}  // namespace smd
