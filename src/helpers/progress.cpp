#include "tg/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "tg/helpers.h"

namespace tg {

namespace {
std::string clock(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  auto t = static_cast<long long>(s + 0.5);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%02lld:%02lld", t / 60, t % 60);
  return buf;
}
}  // namespace

ProgressBar::ProgressBar(int64_t total, std::string desc, std::FILE* out)
    : total_(std::max<int64_t>(total, 0)), desc_(std::move(desc)), out_(out), tty_(::isatty(::fileno(out)) != 0), start_(now_s()) {
  draw(false);
}

ProgressBar::~ProgressBar() { close(); }

double ProgressBar::rate() const {
  double dt = now_s() - start_;
  return dt > 0 ? static_cast<double>(done_) / dt : 0;
}

std::string ProgressBar::line() const {
  constexpr int kWidth = 20;
  double frac = total_ > 0 ? std::min(1.0, static_cast<double>(done_) / static_cast<double>(total_)) : 0;
  int filled = static_cast<int>(frac * kWidth);
  double r = rate();
  double eta = r > 0 ? static_cast<double>(total_ - done_) / r : NAN;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s%s%lld/%lld [%s%s] %3d%% %.2f it/s ETA %s", desc_.c_str(), desc_.empty() ? "" : " ",
                static_cast<long long>(done_), static_cast<long long>(total_), std::string(static_cast<size_t>(filled), '#').c_str(),
                std::string(static_cast<size_t>(kWidth - filled), '-').c_str(), static_cast<int>(frac * 100), r, clock(eta).c_str());
  return postfix_.empty() ? std::string(buf) : std::string(buf) + " | " + postfix_;
}

void ProgressBar::draw(bool final) {
  double t = now_s();
  if (!final && last_draw_ >= 0 && t - last_draw_ < (tty_ ? 0.1 : 1.0)) return;
  last_draw_ = t;
  std::string l = line();
  if (tty_) std::fprintf(out_, "\r\033[K%s%s", l.c_str(), final ? "\n" : "");
  else if (l != last_line_) std::fprintf(out_, "%s\n", l.c_str());  // (the final line may be the last one drawn)
  last_line_ = l;
  std::fflush(out_);
}

void ProgressBar::update(int64_t n) {
  done_ += n;
  draw(false);
}

void ProgressBar::set_postfix(const std::string& text) { postfix_ = text; }
void ProgressBar::set_description(const std::string& desc) { desc_ = desc; }

void ProgressBar::close() {
  if (closed_) return;
  closed_ = true;
  draw(true);
}

}  // namespace tg
