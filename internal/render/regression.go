package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
)

// RegressionLabel names a regression as [game] (docs/references.md) does:
// "Host QoS 33", "VM QoS 9". It leaves out the workload; say it alongside
// when there are several.
func RegressionLabel(c analysis.ClassRegression) string {
	return TargetLabel(c.Target) + " QoS " + strconv.Itoa(c.QoS)
}

// Regression writes a regression as [game] (docs/references.md) prints
// one:
//
//	Host QoS 33: R = (1.411 x 10^7) + (1.4784 x 10^8).T
//
// Each coefficient is in scientific notation with 5 significant digits and
// trailing zeros dropped: the article's six published coefficients all fit
// that rule (1.4110 is printed 1.411). A negative coefficient keeps its sign
// inside the parentheses, "(-2.1 x 10^6)", and zero is "(0 x 10^0)". Without
// a fitted line it says so instead of printing NaNs.
func Regression(label string, r analysis.Regression) string {
	if r.A.IsNaN() || r.B.IsNaN() {
		return label + ": no regression (needs rates at three or more thread counts; two would only join two means)"
	}
	return label + ": R = (" + sciNotation(float64(r.A)) + ") + (" + sciNotation(float64(r.B)) + ").T"
}

// ClassRegression is Regression followed by the Theil-Sen slope and its
// interval: "Host QoS 33: R = (1.411 x 10^7) + (1.4784 x 10^8).T; slope
// 1.48e+08 [1.41e+08..1.55e+08] (Theil-Sen, 95%)".
func ClassRegression(c analysis.ClassRegression) string {
	line := Regression(RegressionLabel(c), c.Regression)
	if c.Slope.Slope.IsNaN() || c.B.IsNaN() {
		return line
	}
	g := func(f analysis.Float) string { return strconv.FormatFloat(float64(f), 'g', 3, 64) }
	return line + fmt.Sprintf("; slope %s [%s..%s] (Theil-Sen, %g%%)", g(c.Slope.Slope), g(c.Slope.Low), g(c.Slope.High), 100*analysis.Confidence)
}

// sciNotation renders x as "m x 10^e" with m to 5 significant digits, its
// trailing zeros dropped. strconv does the rounding, so 9.99996e7 becomes
// "1 x 10^8", never "10 x 10^7".
func sciNotation(x float64) string {
	if x == 0 {
		return "0 x 10^0"
	}
	s := strconv.FormatFloat(x, 'e', 4, 64) // "-1.4784e+08"
	mant, exp, _ := strings.Cut(s, "e")
	if strings.Contains(mant, ".") {
		mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
	}
	e, err := strconv.Atoi(exp)
	if err != nil { // Inf: FormatFloat gives "+Inf", with no exponent
		return s
	}
	return mant + " x 10^" + strconv.Itoa(e)
}
