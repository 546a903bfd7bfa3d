// Test support: a program started as a child process, its standard output and error written
// to files (the test reads them while the child runs or after it ends).
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace chatpeg::testing {

// Starts argv[0] with the arguments argv; stdout goes to out_path and stderr to err_path
// (both to out_path when err_path is empty). Returns the child's pid, or -1 when fork failed;
// a child that cannot run argv[0] exits with 127.
inline pid_t spawn_logged(std::vector<std::string> argv, const std::string& out_path,
                          const std::string& err_path = {}) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err =
      err_path.empty() ? out : ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(out, 1);
  ::dup2(err, 2);
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  ::execv(cargv[0], cargv.data());
  ::_exit(127);
}

}  // namespace chatpeg::testing
