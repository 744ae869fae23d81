# Reference values for qoslab's rank tests, from R itself.
#
# Run: Rscript testdata/analysis/ranksum-reference.R > testdata/analysis/ranksum-reference.json
#
# What R computes here, independently of qoslab's Go code:
# - one stratum: wilcox.test(x, y, exact = ..., correct = TRUE, conf.int = TRUE)
#   on log(x) and log(y): the two-sided p value, the Hodges-Lehmann estimate
#   of the shift and its 95% interval (qoslab's mannWhitney and logShift);
# - several strata (thread counts), exact: the null distribution of the sum
#   of the strata's Mann-Whitney U is the convolution of R's dwilcox for each
#   stratum; the two-sided p is twice the smaller tail (qoslab's
#   stratifiedMannWhitney). The statistic is that of the stratified
#   Wilcoxon rank-sum test with equal weight per pair (the sum of the
#   strata's rank sums, as coin::wilcox_test(y ~ g | block) uses; van
#   Elteren's test weights each stratum by 1/(n+1) instead and is not what
#   qoslab computes).
# - the interval of the stratified shift: the k-th smallest and largest
#   within-stratum difference of logs, k the smallest count whose lower tail
#   under that convolution reaches 2.5% (as wilcox.test does with qwilcox).
# - tied cases ("tied_cases"), by brute force: in each stratum every choice
#   of which pooled values are the x's is enumerated (combn), the pooled
#   values ranked with midranks, and the rank-sum statistic's exact
#   conditional null distribution tabulated; the strata's are convolved. The
#   two-sided p is twice the smaller tail, and coin::wilcox_test(y ~ g |
#   stratum, distribution = exact()) must agree (its one-sided p values,
#   doubled). The interval of the shift inverts that test: it is evaluated
#   at every distinct within-stratum difference of logs (where that pair
#   ties) and between and beyond them, each with its own conditional
#   distribution, and spans every shift with p >= 1 - confidence; when a
#   shift beyond every difference is accepted the interval stops at the
#   range of the differences and its coverage is 1 - 2/prod(choose(m+n, m)).
options(digits = 17)
suppressMessages(library(coin))

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
  # 50 or more with ties: the normal approximation with the tie-corrected
  # variance and a continuity correction of 1/2 (R's interval then comes from
  # a root search qoslab does not do: only u and p are compared). Below 50,
  # tied cases are exact and conditional: tied_cases below.
  list(name = "50v52 one stratum with ties, normal", x = list(rep(c(10, 11, 12, 13, 14), 10)), y = list(rep(c(9, 10, 11, 12), 13)), exact = FALSE),
  list(name = "two strata 3v3", x = list(c(300, 305, 310), c(600, 612, 640)), y = list(c(98, 99, 100), c(200, 190, 210)), exact = TRUE),
  list(name = "three strata, mixed sizes", x = list(c(1.05, 1.01), c(2.2, 2.0, 2.5, 2.1), c(4.4, 3.9, 4.1)),
       y = list(c(1.0, 0.97, 1.03), c(2.05, 1.9, 2.3, 2.15), c(4.0, 3.7, 3.8, 4.2, 3.95)), exact = TRUE),
  list(name = "two strata 6v6, overlapping", x = list(c(12.4, 11.9, 13.1, 12.8, 12.2, 13.5), c(24.1, 25.3, 23.8, 26.0, 24.9, 25.5)),
       y = list(c(11.6, 12.0, 11.1, 12.9, 11.8, 11.4), c(23.9, 24.4, 23.1, 25.1, 24.0, 23.5)), exact = TRUE)
)

# Midranks of the pooled values of one stratum at shift delta, from the
# comparisons alone (x_i - delta against y_j through the difference
# d[i, j] = lx[i] - ly[j], so no rounding of x - delta can make or break a
# tie): rank = 1 + (values below) + (other values equal) / 2.
pooled_ranks <- function(lx, ly, delta) {
  m <- length(lx); n <- length(ly); N <- m + n
  d <- outer(lx, ly, "-")
  cmp <- matrix(0, N, N)
  cmp[1:m, 1:m] <- sign(outer(lx, lx, "-"))
  cmp[(m + 1):N, (m + 1):N] <- sign(outer(ly, ly, "-"))
  cmp[1:m, (m + 1):N] <- sign(d - delta)
  cmp[(m + 1):N, 1:m] <- -t(sign(d - delta))
  1 + rowSums(cmp < 0) + (rowSums(cmp == 0) - 1) / 2
}

# The exact conditional null distribution of 2U of one stratum at delta,
# by enumerating every choice of the x's, and the observed 2U.
stratum_null <- function(lx, ly, delta) {
  m <- length(lx); N <- m + length(ly)
  r <- pooled_ranks(lx, ly, delta)
  u2 <- round(2 * (colSums(matrix(r[combn(N, m)], nrow = m)) - m * (m + 1) / 2))
  list(dist = tabulate(u2 + 1, nbins = 2 * m * length(ly) + 1) / choose(N, m),
       u2 = round(2 * (sum(r[1:m]) - m * (m + 1) / 2)))
}

conditional_p <- function(lxs, lys, delta) {
  dist <- 1
  t <- 0
  for (s in seq_along(lxs)) {
    st <- stratum_null(lxs[[s]], lys[[s]], delta)
    dist <- convolve_dist(dist, st$dist)
    t <- t + st$u2
  }
  cdf <- cumsum(dist)
  lo <- cdf[t + 1]
  hi <- 1 - c(0, cdf)[t + 1]
  min(1, 2 * min(lo, hi))
}

tied <- function(xs, ys, levels = c(0.90, 0.95)) {
  lxs <- lapply(xs, log); lys <- lapply(ys, log)
  diffs <- c()
  for (s in seq_along(xs)) diffs <- c(diffs, as.vector(outer(lxs[[s]], lys[[s]], "-")))
  p <- conditional_p(lxs, lys, 0)
  # coin, independently: the same statistic's exact conditional tails.
  y <- c(); g <- c(); b <- c()
  for (s in seq_along(xs)) {
    y <- c(y, xs[[s]], ys[[s]])
    g <- c(g, rep("x", length(xs[[s]])), rep("y", length(ys[[s]])))
    b <- c(b, rep(s, length(xs[[s]]) + length(ys[[s]])))
  }
  d <- data.frame(y = y, g = factor(g, levels = c("x", "y")), b = factor(b))
  greater <- pvalue(wilcox_test(y ~ g | b, data = d, distribution = exact(), alternative = "greater"))
  less <- pvalue(wilcox_test(y ~ g | b, data = d, distribution = exact(), alternative = "less"))
  p_coin <- min(1, 2 * min(greater, less))
  stopifnot(abs(p - p_coin) < 1e-12)
  u <- 0
  for (s in seq_along(xs)) u <- u + sum(outer(xs[[s]], ys[[s]], ">")) + 0.5 * sum(outer(xs[[s]], ys[[s]], "=="))
  pts <- sort(unique(diffs))
  # Shifts to try: below, at, between and above the distinct differences.
  mids <- if (length(pts) > 1) (pts[-1] + pts[-length(pts)]) / 2 else c()
  at <- c(pts[1] - 1, as.vector(rbind(pts, c(mids, pts[length(pts)] + 1))))
  ps <- sapply(at, function(delta) conditional_p(lxs, lys, delta))
  smallest <- 2 / prod(sapply(seq_along(xs), function(s) choose(length(xs[[s]]) + length(ys[[s]]), length(xs[[s]]))))
  intervals <- lapply(levels, function(level) {
    ok <- which(ps >= 1 - level)
    first <- min(ok); last <- max(ok)
    region <- function(i, upper) {
      # at[i]: i odd -> open region (i = 1 below all), i even -> point pts[i / 2]
      if (i %% 2 == 0) return(pts[i / 2])
      if (upper) pts[(i + 1) / 2] else pts[(i - 1) / 2]
    }
    clamped <- first == 1 || last == length(at)
    low <- if (first == 1) pts[1] else region(first, FALSE)
    high <- if (last == length(at)) pts[length(pts)] else region(last, TRUE)
    list(level = level, low = low, high = high, confidence = if (clamped) min(level, 1 - smallest) else level)
  })
  list(u = u, p = p, p_coin = p_coin, estimate = median(diffs), intervals = intervals)
}

tied_cases <- list(
  # 3 against 3 at one thread count, equal rates within each side: the
  # normal approximation gave p = 0.047, below the 0.1 these sizes allow.
  list(name = "3v3 one stratum, ties within each side", x = list(c(300, 310, 310)), y = list(c(100, 100, 105))),
  # 2 against 2 with one tie: the range of the differences covers 66.7%.
  list(name = "2v2 one stratum, one tie", x = list(c(200, 210)), y = list(c(100, 100))),
  list(name = "5v7 one stratum with ties", x = list(c(5.5, 6.1, 4.9, 7.2, 5.0)), y = list(c(4.1, 5.0, 3.9, 4.4, 6.0, 4.7, 5.0))),
  # Rates recorded to two digits, as a coarse timer makes them.
  list(name = "two strata 6v6, rounded rates", x = list(c(2.1, 2.3, 2.3, 2.2, 2.5, 2.1), c(4.4, 4.6, 4.4, 4.9, 4.6, 4.5)),
       y = list(c(2.0, 2.1, 1.9, 2.0, 2.2, 2.0), c(4.3, 4.4, 4.2, 4.4, 4.1, 4.3))),
  # Ties across the samples at every level: values from three levels only.
  list(name = "6v6 three levels", x = list(c(1, 2, 2, 3, 3, 3)), y = list(c(1, 1, 2, 2, 2, 3))),
  list(name = "three strata, mixed sizes, ties", x = list(c(1.05, 1.05), c(2.2, 2.0, 2.2, 2.1), c(4.4, 3.9, 4.1)),
       y = list(c(1.0, 1.05, 1.03), c(2.05, 1.9, 2.0, 2.15), c(4.0, 3.9, 3.8, 4.2, 3.95)))
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
tout <- c()
for (c in tied_cases) {
  r <- tied(c$x, c$y)
  xs <- paste0("[", paste(sapply(c$x, json_vec), collapse = ", "), "]")
  ys <- paste0("[", paste(sapply(c$y, json_vec), collapse = ", "), "]")
  iv <- paste(sapply(r$intervals, function(i) sprintf('{"level": %s, "low": %s, "high": %s, "confidence": %s}',
    json_num(i$level), json_num(i$low), json_num(i$high), json_num(i$confidence))), collapse = ", ")
  tout <- c(tout, sprintf('  {"name": "%s", "x": %s, "y": %s, "u": %s, "p": %s, "p_coin": %s, "estimate": %s, "intervals": [%s]}',
    c$name, xs, ys, json_num(r$u), json_num(r$p), json_num(r$p_coin), json_num(r$estimate), iv))
}
cat('{\n "generated_by": "', R.version.string, ', coin ', as.character(packageVersion("coin")), ' (Rscript testdata/analysis/ranksum-reference.R)",\n "cases": [\n', sep = "")
cat(paste(out, collapse = ",\n"), "\n ],\n \"tied_cases\": [\n", sep = "")
cat(paste(tout, collapse = ",\n"), "\n ]\n}\n", sep = "")
