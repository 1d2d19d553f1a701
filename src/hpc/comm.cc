#include "hpc/comm.h"

#include <algorithm>

namespace ndt {

StatusOr<CommCurve> CommCurve::Build(const Cluster& c, CollOp op, const std::vector<int>& group,
                                     double max_bytes, const CollOptions& options) {
  CommCurve curve;
  if (group.size() < 2) return curve;
  for (double b = 8;; b *= 4) {
    const double size = std::min(b, std::max(max_bytes, 8.0));
    NDT_ASSIGN_OR_RETURN(CollResult r, TimeCollective(c, op, size, group, options));
    curve.bytes_.push_back(size);
    curve.time_s_.push_back(r.time_s);
    if (size >= max_bytes) break;
  }
  return curve;
}

double CommCurve::Time(double bytes) const {
  if (bytes_.empty() || bytes <= 0) return 0;
  if (bytes <= bytes_.front()) return time_s_.front();
  const size_t n = bytes_.size();
  if (bytes >= bytes_.back()) {
    if (n == 1) return time_s_.back() * bytes / bytes_.back();
    // Past the last sample: extend the last segment's slope (bandwidth-bound).
    const double slope = (time_s_[n - 1] - time_s_[n - 2]) / (bytes_[n - 1] - bytes_[n - 2]);
    return time_s_.back() + slope * (bytes - bytes_.back());
  }
  const size_t i = std::upper_bound(bytes_.begin(), bytes_.end(), bytes) - bytes_.begin();
  const double f = (bytes - bytes_[i - 1]) / (bytes_[i] - bytes_[i - 1]);
  return time_s_[i - 1] + f * (time_s_[i] - time_s_[i - 1]);
}

}  // namespace ndt
