package main

import "github.com/criticizer/criticizer/shared/domain"

func finding(file string, line int, category string) domain.Finding {
	return domain.Finding{File: file, Line: line, Category: category, Severity: "high", Title: "t", Message: "m"}
}

func resultWith(fs ...domain.Finding) domain.ReviewResult { return domain.ReviewResult{Findings: fs} }
