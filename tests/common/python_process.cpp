#include "python_process.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

extern char** environ;

namespace tgtest {

PythonProcess::PythonProcess(const std::string& script, std::string name, std::string needs)
    : name_(std::move(name)), needs_(std::move(needs)) {
  int to_child[2], from_child[2];
  if (pipe(to_child) != 0 || pipe(from_child) != 0) throw std::runtime_error(name_ + ": pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, to_child[0], 0);
  posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
  posix_spawn_file_actions_addclose(&fa, to_child[1]);
  posix_spawn_file_actions_addclose(&fa, from_child[0]);
  std::string py = TG_REF_PYTHON;
  std::vector<char*> argv{py.data(), const_cast<char*>(script.c_str()), nullptr};
  std::vector<std::string> env_s;  // a sanitizer's preload must not reach the interpreter
  for (char** e = environ; *e; e++)
    if (std::string(*e).rfind("LD_PRELOAD=", 0) != 0) env_s.emplace_back(*e);
  std::vector<char*> env;
  for (auto& s : env_s) env.push_back(s.data());
  env.push_back(nullptr);
  int rc = posix_spawn(&pid_, py.c_str(), &fa, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&fa);
  close(to_child[0]);
  close(from_child[1]);
  if (rc != 0) throw std::runtime_error(name_ + ": cannot start " + py);
  in_ = fdopen(to_child[1], "w");
  out_ = fdopen(from_child[0], "r");
}

PythonProcess::~PythonProcess() {
  if (in_) fclose(in_);
  if (out_) fclose(out_);
  int st;
  if (pid_ > 0) waitpid(pid_, &st, 0);
}

std::vector<int> PythonProcess::fds() const { return {fileno(in_), fileno(out_)}; }

nlohmann::json PythonProcess::call(const nlohmann::json& request) {
  std::string line = request.dump() + "\n";
  if (fwrite(line.data(), 1, line.size(), in_) != line.size() || fflush(in_) != 0)
    throw std::runtime_error(name_ + ": cannot write to the python process");
  char* buf = nullptr;
  size_t cap = 0;
  ssize_t n = getline(&buf, &cap, out_);
  std::string reply = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  free(buf);
  if (reply.empty()) throw std::runtime_error(name_ + ": the python process (" TG_REF_PYTHON ") exited; is " + needs_ + " installed?");
  return nlohmann::json::parse(reply);
}

}  // namespace tgtest
