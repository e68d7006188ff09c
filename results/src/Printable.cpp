// Printable.cpp — untrusted text made safe to show to people (see Printable.h for the rules).
#include "flotilla/results/Printable.h"

#include <fmt/format.h>

namespace flotilla::results {
namespace {

// The code point of the valid UTF-8 sequence at the start of `s` and its length in bytes, or a
// length of 0 when it is not one (a stray continuation byte, a cut sequence, an overlong form, a
// surrogate or a value past U+10FFFF).
struct Decoded {
  char32_t code = 0;
  std::size_t length = 0;
};

Decoded decode(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned lead = byte(0);
  if (lead < 0x80) return {lead, 1};
  std::size_t length = 0;
  char32_t code = 0, min = 0;
  if ((lead & 0xE0) == 0xC0) length = 2, code = lead & 0x1F, min = 0x80;
  else if ((lead & 0xF0) == 0xE0) length = 3, code = lead & 0x0F, min = 0x800;
  else if ((lead & 0xF8) == 0xF0) length = 4, code = lead & 0x07, min = 0x10000;
  else return {};
  if (s.size() < length) return {};
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return {};
    code = (code << 6) | (byte(k) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return {};
  return {code, length};
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto d = decode(text.substr(i));
    if (d.length == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    const char32_t c = d.code;
    if (c == '\n' || c == '\t')
      out += static_cast<char>(c);
    else if (c < 0x20 || c == 0x7F)
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
    else if (c >= 0x80 && c <= 0x9F)
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    else
      out += text.substr(i, d.length);
    i += d.length;
  }
  return out;
}

}  // namespace flotilla::results
