// Family.cpp — the registry (one explicit list) and the generic parameter checks.
//
// The list is a function-local static built on first use, so a static library never loses a
// family to the linker dropping an unreferenced self-registering object file.
#include "flotilla/kernels/Family.h"

#include <charconv>

#include "Families.h"

namespace flotilla::kernels {

const std::vector<const KernelFamily*>& families() {
  static const std::vector<const KernelFamily*> list = {
      &stencil_family(),
      &sleep_family(),
      &rmsnorm_family(),
      &gemv_family(),
      &attention_family(),
      &allreduce_norm_family(),
      &h2d_metadata_family(),
      &decode_family(),
  };
  return list;
}

const KernelFamily* find_family(std::string_view name) {
  for (const KernelFamily* family : families()) {
    if (family->name() == name) return family;
  }
  return nullptr;
}

std::string ParamDecl::allowed_text() const {
  if (choices.empty()) {
    return "integer in [" + std::to_string(min_value) + ", " + std::to_string(max_value) + "]";
  }
  std::string text = "one of ";
  for (std::size_t k = 0; k < choices.size(); ++k) {
    text += (k ? ", " : "") + choices[k];
  }
  return text;
}

namespace {

// Strict decimal: no sign other than '-', no spaces, no trailing text ("8x" is not 8).
bool parse_int(const std::string& text, std::int64_t& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && !text.empty();
}

bool is_allowed(const ParamDecl& decl, const std::string& value) {
  if (!decl.choices.empty()) {
    for (const std::string& choice : decl.choices) {
      if (choice == value) return true;
    }
    return false;
  }
  std::int64_t number = 0;
  return parse_int(value, number) && number >= decl.min_value && number <= decl.max_value;
}

const ParamDecl* find_decl(const KernelFamily& family, const std::string& name) {
  for (const ParamDecl& decl : family.params()) {
    if (decl.name == name) return &decl;
  }
  return nullptr;
}

}  // namespace

Params resolve_params(const KernelFamily& family, const Params& given) {
  for (const auto& [name, value] : given) {
    if (!find_decl(family, name)) {
      throw InvalidParameter(
          name, "unknown parameter '" + name + "' for kernel family '" + std::string(family.name()) + "'");
    }
  }
  Params resolved;
  for (const ParamDecl& decl : family.params()) {
    auto it = given.find(decl.name);
    const std::string& value = it == given.end() ? decl.default_value : it->second;
    if (!is_allowed(decl, value)) {
      const std::string kind = decl.choices.empty() ? "must be an " : "must be ";
      throw InvalidParameter(
          decl.name, "parameter '" + decl.name + "' " + kind + decl.allowed_text() + ", got '" + value + "'");
    }
    resolved[decl.name] = value;
  }
  return resolved;
}

std::int64_t int_param(const Params& resolved, const std::string& name) {
  auto it = resolved.find(name);
  std::int64_t value = 0;
  if (it == resolved.end() || !parse_int(it->second, value)) {
    // Only reachable by calling this without resolve_params: a programming error.
    throw std::logic_error("int_param: parameter '" + name + "' is not a resolved integer");
  }
  return value;
}

}  // namespace flotilla::kernels
