#include "tg/helpers.h"
#include "tg/error.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace tg {

std::string getenv_str(const std::string& name, const std::string& def) {
  const char* v = std::getenv(name.c_str());
  return v ? std::string(v) : def;
}

int getenv(const std::string& name, int def) {
  const char* v = std::getenv(name.c_str());
  if (!v || !*v) return def;
  char* end = nullptr;
  long r = std::strtol(v, &end, 10);
  return (end && *end == 0) ? static_cast<int>(r) : def;
}

static std::map<std::string, ContextVar*>& registry() {
  static std::map<std::string, ContextVar*> r;
  return r;
}

ContextVar::ContextVar(const char* k, int def) : key(k), value(getenv(k, def)) { registry()[k] = this; }

ContextVar* ContextVar::find(const std::string& k) {
  auto it = registry().find(k);
  return it == registry().end() ? nullptr : it->second;
}

Context::Context(std::initializer_list<std::pair<const char*, int>> overrides)
    : Context(std::vector<std::pair<std::string, int>>(overrides.begin(), overrides.end())) {}

Context::Context(const std::vector<std::pair<std::string, int>>& overrides) {
  for (auto& [k, v] : overrides) {
    ContextVar* cv = ContextVar::find(k);
    if (!cv) {  // an unknown key is a user mistake: undo what we set, then report
      for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) it->first->value = it->second;
      throw Error(std::string("Context: unknown setting '") + k + "'");
    }
    saved_.emplace_back(cv, cv->value);
    cv->value = v;
  }
}

Context::~Context() {
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) it->first->value = it->second;
}

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) { h ^= c; h *= 1099511628211ull; }
  return h;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string si(double v, int width) {
  const char* units = " KMGTP";
  int u = 0;
  while (v >= 1000 && u < 5) { v /= 1000; u++; }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%*.2f%c", width - 1, v, units[u]);
  return buf;
}

}  // namespace tg
