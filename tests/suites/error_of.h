// error_of.h — the message of the Error an action throws, or "no error": the suites tests compare
// whole error messages.
#pragma once

#include <functional>
#include <string>

template <class Error>
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}
