// `procgen serve` as a process: prints its address on stdout, answers, and
// exits 0 on SIGTERM; a port already in use is a usage error (exit 1) that
// names the address.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <regex>
#include <string>
#include <thread>

#include "studio/studio_client.hpp"

namespace procgen {
namespace {

struct ServeProcess {
  pid_t pid = -1;
  FILE* out = nullptr;
  std::string first_line;
};

ServeProcess startServe(const std::string& port, const char* budget = nullptr) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  ServeProcess p;
  p.pid = fork();
  if (p.pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    if (budget)
      execl(PROCGEN_CLI_PATH, PROCGEN_CLI_PATH, "serve", "--port", port.c_str(), "--quiet", "--memory-budget", budget,
            static_cast<char*>(nullptr));
    else
      execl(PROCGEN_CLI_PATH, PROCGEN_CLI_PATH, "serve", "--port", port.c_str(), "--quiet", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  p.out = fdopen(fds[0], "r");
  char line[256] = {};
  if (std::fgets(line, sizeof line, p.out)) p.first_line = line;
  return p;
}

int waitExit(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 200; ++i) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

TEST(StudioServeCli, PrintsItsAddressServesAndStopsOnSigterm) {
  ServeProcess p = startServe("0");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(p.first_line, m, std::regex(R"(procgen studio: http://127\.0\.0\.1:(\d+)/)")))
      << p.first_line;
  int port = std::stoi(m[1]);
  httplib::Client client("127.0.0.1", port);
  auto info = client.Get("/api/info");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->status, 200);
  EXPECT_EQ(nlohmann::json::parse(info->body)["name"], "procgen studio");
  kill(p.pid, SIGTERM);
  EXPECT_EQ(waitExit(p.pid), 0);
  std::fclose(p.out);

  // The port is free again; a second server on a taken port fails cleanly.
  studio_test::TestServer holder;
  ServeProcess q = startServe(std::to_string(holder.port()));
  EXPECT_EQ(q.first_line, "");
  EXPECT_EQ(waitExit(q.pid), 1);
  std::fclose(q.out);
}

TEST(StudioServeCli, MemoryBudgetBoundsEachComputation) {
  ServeProcess p = startServe("0", "1M");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(p.first_line, m, std::regex(R"(:(\d+)/)"))) << p.first_line;
  httplib::Client client("127.0.0.1", std::stoi(m[1]));
  // A 512² field is 1 MiB of floats before the image: over a 1 MiB budget.
  auto big = client.Post("/api/noise/heightmap", R"({"type": "perlin", "size": [512, 512]})", "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 422);
  EXPECT_EQ(nlohmann::json::parse(big->body)["error"]["kind"], "budget");
  auto small = client.Post("/api/noise/heightmap", R"({"type": "perlin", "size": [64, 64]})", "application/json");
  ASSERT_TRUE(small);
  EXPECT_EQ(small->status, 200);
  kill(p.pid, SIGTERM);
  EXPECT_EQ(waitExit(p.pid), 0);
  std::fclose(p.out);
}

}  // namespace
}  // namespace procgen
