// A progress bar for long loops, as tinygrad's tqdm helper:
//
//   tg::ProgressBar bar(steps, "train");
//   for (...) { ...; bar.set_postfix("loss 0.35"); bar.update(); }
//
//   train  42/70 [##########----------]  60% 3.12 it/s ETA 00:09 | loss 0.35
//
// On a terminal the line is redrawn in place (at most a few times a second); otherwise it prints plain
// lines, one a second at most, and always the last one.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace tg {

class ProgressBar {
 public:
  explicit ProgressBar(int64_t total, std::string desc = "", std::FILE* out = stdout);
  ~ProgressBar();  // finishes the line (close())
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(int64_t n = 1);                 // n more done; redraws when due
  void set_postfix(const std::string& text);  // shown after the bar from the next redraw on
  void set_description(const std::string& desc);  // shown before it (tqdm's name)
  void close();                               // the final line (once)
  double rate() const;                        // iterations per second so far
  std::string line() const;                   // what a redraw prints now, without the carriage return

 private:
  void draw(bool final);
  int64_t total_, done_ = 0;
  std::string desc_, postfix_, last_line_;
  std::FILE* out_;
  bool tty_, closed_ = false;
  double start_, last_draw_ = -1;
};

}  // namespace tg
