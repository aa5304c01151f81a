#include "ref_process.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

extern char** environ;

namespace tgdiff {

NumpyRef::NumpyRef() {
  int to_child[2], from_child[2];
  if (pipe(to_child) != 0 || pipe(from_child) != 0) throw std::runtime_error("numpy_ref: pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, to_child[0], 0);
  posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
  posix_spawn_file_actions_addclose(&fa, to_child[1]);
  posix_spawn_file_actions_addclose(&fa, from_child[0]);
  const char* argv[] = {TG_REF_PYTHON, TG_DIFF_SCRIPT, nullptr};
  std::vector<std::string> env_s;  // a sanitizer's preload must not reach the interpreter
  for (char** e = environ; *e; e++)
    if (std::string(*e).rfind("LD_PRELOAD=", 0) != 0) env_s.emplace_back(*e);
  std::vector<char*> env;
  for (auto& s : env_s) env.push_back(s.data());
  env.push_back(nullptr);
  int rc = posix_spawn(&pid_, TG_REF_PYTHON, &fa, nullptr, const_cast<char**>(argv), env.data());
  posix_spawn_file_actions_destroy(&fa);
  close(to_child[0]);
  close(from_child[1]);
  if (rc != 0) throw std::runtime_error("numpy_ref: cannot start " TG_REF_PYTHON);
  in_ = fdopen(to_child[1], "w");
  out_ = fdopen(from_child[0], "r");
}

NumpyRef::~NumpyRef() {
  if (in_) fclose(in_);
  if (out_) fclose(out_);
  int st;
  if (pid_ > 0) waitpid(pid_, &st, 0);
}

std::vector<int> NumpyRef::fds() const { return {fileno(in_), fileno(out_)}; }

nlohmann::json NumpyRef::call(const nlohmann::json& request) {
  std::string line = request.dump() + "\n";
  if (fwrite(line.data(), 1, line.size(), in_) != line.size() || fflush(in_) != 0)
    throw std::runtime_error("numpy_ref: cannot write to the python process");
  char* buf = nullptr;
  size_t cap = 0;
  ssize_t n = getline(&buf, &cap, out_);
  std::string reply = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  free(buf);
  if (reply.empty()) throw std::runtime_error("numpy_ref: the python process (" TG_REF_PYTHON ") exited; is python3-numpy installed?");
  return nlohmann::json::parse(reply);
}

}  // namespace tgdiff
