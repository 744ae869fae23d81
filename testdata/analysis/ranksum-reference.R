# Reference values for qoslab's rank tests, from R itself.
#
# Run: Rscript testdata/analysis/ranksum-reference.R > testdata/analysis/ranksum-reference.json
#
# What R computes here, independently of qoslab's Go code:
# - one stratum: wilcox.test(x, y, exact = ..., correct = TRUE, conf.int = TRUE)
#   on log(x) and log(y): the two-sided p value, the Hodges-Lehmann estimate
#   of the shift and its 95% interval (qoslab's MannWhitney and LogShift);
# - several strata (thread counts), exact: the null distribution of the sum
#   of the strata's Mann-Whitney U is the convolution of R's dwilcox for each
#   stratum; the two-sided p is twice the smaller tail (qoslab's
#   StratifiedMannWhitney). The statistic is that of the stratified
#   Wilcoxon rank-sum test with equal weight per pair (the sum of the
#   strata's rank sums, as coin::wilcox_test(y ~ g | block) uses; van
#   Elteren's test weights each stratum by 1/(n+1) instead and is not what
#   qoslab computes).
# - the interval of the stratified shift: the k-th smallest and largest
#   within-stratum difference of logs, k the smallest count whose lower tail
#   under that convolution reaches 2.5% (as wilcox.test does with qwilcox).
options(digits = 17)

convolve_dist <- function(a, b) {
  out <- numeric(length(a) + length(b) - 1)
  for (i in seq_along(a)) out[i:(i + length(b) - 1)] <- out[i:(i + length(b) - 1)] + a[i] * b
  out
}

stratified <- function(xs, ys) {
  dist <- 1
  u <- 0
  diffs <- c()
  for (s in seq_along(xs)) {
    x <- xs[[s]]; y <- ys[[s]]
    m <- length(x); n <- length(y)
    dist <- convolve_dist(dist, dwilcox(0:(m * n), m, n))
    u <- u + sum(outer(x, y, ">")) + 0.5 * sum(outer(x, y, "=="))
    diffs <- c(diffs, as.vector(outer(log(x), log(y), "-")))
  }
  cdf <- cumsum(dist)
  lo <- cdf[u + 1]                 # P(U <= u)
  hi <- 1 - c(0, cdf)[u + 1]       # P(U >= u)
  p <- min(1, 2 * min(lo, hi))
  diffs <- sort(diffs)
  k <- which(cdf >= 0.025)[1] - 1  # smallest count q with P(U <= q) >= 2.5%
  if (k == 0) k <- 1
  below <- if (k >= 1) sum(dist[seq_len(k)]) else 0
  list(u = u, p = p, estimate = median(diffs), low = diffs[k], high = diffs[length(diffs) + 1 - k],
       confidence = 1 - 2 * below)
}

single <- function(x, y, exact) {
  w <- suppressWarnings(wilcox.test(log(x), log(y), exact = exact, correct = TRUE, conf.int = TRUE))
  list(u = unname(w$statistic), p = w$p.value, estimate = unname(w$estimate),
       low = w$conf.int[1], high = w$conf.int[2], confidence = attr(w$conf.int, "conf.level"))
}

cases <- list(
  list(name = "3v3 one stratum", x = list(c(300, 305, 310)), y = list(c(98, 99, 100)), exact = TRUE),
  list(name = "5v5 one stratum", x = list(c(2.1, 3.4, 2.9, 4.4, 3.9)), y = list(c(1.2, 2.2, 1.7, 3.1, 2.6)), exact = TRUE),
  list(name = "6v6 one stratum", x = list(c(12.4, 11.9, 13.1, 12.8, 12.2, 13.5)), y = list(c(11.6, 12.0, 11.1, 12.9, 11.8, 11.4)), exact = TRUE),
  # Ties: no exact distribution; the normal approximation with the tie-corrected
  # variance and a continuity correction of 1/2 (R's interval then comes from
  # a root search qoslab does not do: only u and p are compared).
  list(name = "5v7 one stratum with ties, normal", x = list(c(5.5, 6.1, 4.9, 7.2, 5.0)), y = list(c(4.1, 5.0, 3.9, 4.4, 6.0, 4.7, 5.0)), exact = FALSE),
  list(name = "two strata 3v3", x = list(c(300, 305, 310), c(600, 612, 640)), y = list(c(98, 99, 100), c(200, 190, 210)), exact = TRUE),
  list(name = "three strata, mixed sizes", x = list(c(1.05, 1.01), c(2.2, 2.0, 2.5, 2.1), c(4.4, 3.9, 4.1)),
       y = list(c(1.0, 0.97, 1.03), c(2.05, 1.9, 2.3, 2.15), c(4.0, 3.7, 3.8, 4.2, 3.95)), exact = TRUE),
  list(name = "two strata 6v6, overlapping", x = list(c(12.4, 11.9, 13.1, 12.8, 12.2, 13.5), c(24.1, 25.3, 23.8, 26.0, 24.9, 25.5)),
       y = list(c(11.6, 12.0, 11.1, 12.9, 11.8, 11.4), c(23.9, 24.4, 23.1, 25.1, 24.0, 23.5)), exact = TRUE)
)

json_num <- function(v) trimws(formatC(v, digits = 17, format = "g"))
json_vec <- function(v) paste0("[", paste(json_num(v), collapse = ", "), "]")
out <- c()
for (c in cases) {
  r <- if (length(c$x) == 1) single(c$x[[1]], c$y[[1]], c$exact) else stratified(c$x, c$y)
  xs <- paste0("[", paste(sapply(c$x, json_vec), collapse = ", "), "]")
  ys <- paste0("[", paste(sapply(c$y, json_vec), collapse = ", "), "]")
  out <- c(out, sprintf('  {"name": "%s", "exact": %s, "x": %s, "y": %s, "u": %s, "p": %s, "estimate": %s, "low": %s, "high": %s, "confidence": %s}',
    c$name, tolower(as.character(c$exact)), xs, ys, json_num(r$u), json_num(r$p), json_num(r$estimate), json_num(r$low), json_num(r$high), json_num(r$confidence)))
}
cat('{\n "generated_by": "', R.version.string, ' (Rscript testdata/analysis/ranksum-reference.R)",\n "cases": [\n', sep = "")
cat(paste(out, collapse = ",\n"), "\n ]\n}\n", sep = "")
