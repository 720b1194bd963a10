package result

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/udiff"
)

// Budget sizes the chunks a changelist is reviewed in and its limits. Zero
// fields take the model family's defaults (For); all are configurable.
type Budget struct {
	ContextTokens int     // the model's context window.
	OutputTokens  int     // reserved for the answer (the request's max_tokens).
	BytesPerToken float64 // estimates prompt bytes per token; lower is more conservative.
	MaxChunkFiles int     // bounds a chunk's files, so its answer fits OutputTokens.
	// MaxFiles and MaxBytes bound a changelist's review; files beyond are named skipped.
	MaxFiles            int
	MaxBytes            int
	MaxFileBytes        int // bounds one file's diff; longer ones are cut at a line, named truncated.
	MaxDescriptionBytes int // bounds the description repeated in every chunk.
	// MaxReviewTokens bounds the tokens (estimated input plus reserved output)
	// a review may spend; files past it are skipped "over_budget". 0: no bound.
	MaxReviewTokens int
}

// family is a model family's context window and tokenizer density.
type family struct {
	prefixes      []string
	contextTokens int
	bytesPerToken float64
}

// families are matched by model-name prefix, after any Bedrock region or
// vendor prefix ("us.", "anthropic."): published context windows, and a
// conservative bytes-per-token estimate for code.
var families = []family{
	{[]string{"gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4"}, 128000, 3.6},
	{[]string{"gpt-4-turbo"}, 128000, 3.6},
	{[]string{"gpt-3.5"}, 16000, 3.6},
	{[]string{"claude"}, 200000, 3.2},
	{[]string{"deepseek"}, 64000, 3.2},
	{[]string{"llama3", "llama-3", "llama4", "meta.llama"}, 128000, 3.2},
	{[]string{"mistral", "mixtral", "qwen"}, 32000, 3.2},
	{[]string{"amazon.nova", "nova"}, 300000, 3.2},
}

// defaultFamily is for an unknown model: a small window, a dense tokenizer.
var defaultFamily = family{contextTokens: 32000, bytesPerToken: 3.0}

// DefaultBudget holds the limits that do not depend on the model.
var DefaultBudget = Budget{
	OutputTokens:        4096,
	MaxChunkFiles:       100,
	MaxFiles:            5000,
	MaxBytes:            64 << 20,
	MaxFileBytes:        256 << 10,
	MaxDescriptionBytes: 8 << 10,
}

// For returns the budget for model with every zero field of b filled
// from the model's family and DefaultBudget.
func (b Budget) For(model string) Budget {
	f := defaultFamily
	m := strings.ToLower(model)
	for _, p := range []string{"us.", "eu.", "apac.", "global.", "anthropic.", "meta.", "amazon.", "mistral."} {
		if strings.HasPrefix(m, p) && !strings.HasPrefix(m, "meta.llama") && !strings.HasPrefix(m, "amazon.nova") {
			m = strings.TrimPrefix(m, p)
		}
	}
	for _, fam := range families {
		for _, p := range fam.prefixes {
			if strings.HasPrefix(m, p) {
				f = fam
			}
		}
	}
	def := DefaultBudget
	b.ContextTokens = cmp.Or(max(b.ContextTokens, 0), f.contextTokens)
	b.BytesPerToken = cmp.Or(max(b.BytesPerToken, 0), f.bytesPerToken)
	b.OutputTokens = cmp.Or(max(b.OutputTokens, 0), def.OutputTokens)
	// A small window (a self-hosted model's 2,048 tokens) cannot hold a
	// 4,096-token answer and a prompt: the answer gets at most a quarter.
	b.OutputTokens = max(min(b.OutputTokens, b.ContextTokens/4), min(b.OutputTokens, MinOutputTokens))
	b.MaxChunkFiles = cmp.Or(max(b.MaxChunkFiles, 0), def.MaxChunkFiles)
	b.MaxFiles = cmp.Or(max(b.MaxFiles, 0), def.MaxFiles)
	b.MaxBytes = cmp.Or(max(b.MaxBytes, 0), def.MaxBytes)
	b.MaxFileBytes = cmp.Or(max(b.MaxFileBytes, 0), def.MaxFileBytes)
	b.MaxDescriptionBytes = cmp.Or(max(b.MaxDescriptionBytes, 0), def.MaxDescriptionBytes)
	return b
}

// MinOutputTokens is the least output a request is sent with: below it no
// review's JSON fits.
const MinOutputTokens = 256

// OutputFor is the max_tokens for prompt p: the budget's output, less what
// the prompt (estimated, with the safety margin) leaves short of the
// context window; never below MinOutputTokens.
func (b Budget) OutputFor(p Prompt) int {
	if b.ContextTokens <= 0 || b.BytesPerToken <= 0 {
		return b.OutputTokens
	}
	promptTokens := int(float64(p.Size()) / b.BytesPerToken / safetyMargin)
	return max(MinOutputTokens, min(b.OutputTokens, b.ContextTokens-promptTokens))
}

// safetyMargin keeps 10% of the window free: the byte-per-token estimate is
// an estimate.
const safetyMargin = 0.9

// perFileOverhead is a file's header, changed-files entry and NOTE line.
func perFileOverhead(path string) int { return 2*len(path) + 200 }

// inputBytes is how many prompt bytes one chunk may hold.
func (b Budget) inputBytes() int {
	return int(float64(b.ContextTokens-b.OutputTokens) * safetyMargin * b.BytesPerToken)
}

// Skipped reasons, as named in the result's meta, the job and the e-mail.
const (
	SkipNoTextualDiff = "no_textual_diff"    // binary, deleted or empty: nothing to review
	SkipOverFileBytes = domain.OverFileBytes // larger than fetch's per-file limit: never printed
	SkipOverFileLimit = "over_file_limit"    // beyond Budget.MaxFiles
	SkipOverByteLimit = "over_byte_limit"    // beyond Budget.MaxBytes
	SkipTooLarge      = "too_large"          // not even one line fits a chunk
	SkipBinary        = "binary"             // a binary file: no text to review
	SkipDeleted       = "deleted"            // deleted: nothing left to review
	SkipIgnored       = "ignored_by_rule"    // matches an ignore pattern of the review rules
	SkipOverBudget    = "over_budget"        // past Budget.MaxReviewTokens
	SkipDailyBudget   = "over_daily_budget"
	SkipModelRefused  = "model_refused" // the model refused or filtered the chunk
)

// noDiffReason says why a file has no textual diff.
func noDiffReason(f domain.FileChange) string {
	switch {
	case f.NotDiffed != "":
		return f.NotDiffed
	case strings.Contains(f.Action, "delete"):
		return SkipDeleted
	case strings.Contains(f.Type, "binary") || strings.Contains(f.Type, "apple") || strings.Contains(f.Type, "resource"):
		return SkipBinary
	}
	return SkipNoTextualDiff
}

// Chunk is one request's worth of files.
type Chunk struct {
	blocks []block
}

// Files returns the chunk's depot paths, in order.
func (c Chunk) Files() []string {
	out := make([]string, len(c.blocks))
	for i, b := range c.blocks {
		out[i] = b.file.DepotPath
	}
	return out
}

// Bytes is the chunk's diff size.
func (c Chunk) Bytes() int {
	n := 0
	for _, b := range c.blocks {
		n += len(b.diff)
	}
	return n
}

// Split halves the chunk: by files, or by cutting its one file's diff in
// half at a line (a truncation); ok is false when nothing smaller is possible.
func (c Chunk) Split() (parts []Chunk, truncated *domain.TruncatedFile, ok bool) {
	if len(c.blocks) > 1 {
		h := len(c.blocks) / 2
		return []Chunk{{blocks: c.blocks[:h:h]}, {blocks: c.blocks[h:]}}, nil, true
	}
	if len(c.blocks) == 0 {
		return nil, nil, false
	}
	b := c.blocks[0]
	cut := cutAtLine(b.diff, len(b.diff)/2)
	if cut == "" || len(cut) == len(b.diff) {
		return nil, nil, false
	}
	orig := cmp.Or(b.original, len(b.file.Diff))
	nb := block{file: b.file, diff: cut, original: orig}
	return []Chunk{{blocks: []block{nb}}}, &domain.TruncatedFile{File: b.file.DepotPath, ReviewedBytes: len(cut), OriginalBytes: orig}, true
}

// Plan is how a changelist is reviewed: its chunks, and every changed file
// that is not reviewed (Skipped) or reviewed in part (Truncated).
type Plan struct {
	Chunks               []Chunk
	Skipped              []domain.SkippedFile
	Truncated            []domain.TruncatedFile
	DescriptionTruncated bool
	description          string
	rules                RuleSet
}

// Plan splits cs into chunks that fit b (call b.For(model) first) for the
// prompt version, in the changeset's order, each filled greedily up to the
// input budget and MaxChunkFiles, under review rules: ignored files are
// skipped, per-path instructions go into their files' prompts (RulesPromptVersion).
func (b Budget) Plan(cs domain.Changeset, version string, rules RuleSet) Plan {
	var p Plan
	p.rules = rules
	p.description = cs.Description
	if len(p.description) > b.MaxDescriptionBytes {
		p.description = domain.Clip(p.description, b.MaxDescriptionBytes)
		p.DescriptionTruncated = true
	}
	// Room for the diffs: the input budget less the fixed parts.
	room := b.inputBytes() - len(SystemPrompt(version)) - len(marshalLine(p.description)) - 1024
	var cur Chunk
	curBytes, total, files := 0, 0, 0
	// The review's token estimate: each chunk costs its fixed part and the output reserved.
	bpt := max(b.BytesPerToken, 1)
	chunkTokens := int(float64(len(SystemPrompt(version))+len(marshalLine(p.description))+1024)/bpt) + b.OutputTokens
	tokens := 0
	flush := func() {
		if len(cur.blocks) > 0 {
			p.Chunks = append(p.Chunks, cur)
		}
		cur, curBytes = Chunk{}, 0
	}
	for _, f := range cs.Files {
		size := len(f.Diff)
		switch {
		case rules.Ignored(f.DepotPath):
			p.Skipped = append(p.Skipped, domain.SkippedFile{File: f.DepotPath, Reason: SkipIgnored, Bytes: size})
			continue
		case size == 0:
			p.Skipped = append(p.Skipped, domain.SkippedFile{File: f.DepotPath, Reason: noDiffReason(f)})
			continue
		case files >= b.MaxFiles:
			p.Skipped = append(p.Skipped, domain.SkippedFile{File: f.DepotPath, Reason: SkipOverFileLimit, Bytes: size})
			continue
		case total >= b.MaxBytes:
			p.Skipped = append(p.Skipped, domain.SkippedFile{File: f.DepotPath, Reason: SkipOverByteLimit, Bytes: size})
			continue
		}
		limit := min(b.MaxFileBytes, room-perFileOverhead(f.DepotPath), b.MaxBytes-total)
		diff := cutAtLine(f.Diff, limit)
		if diff == "" {
			reason := SkipTooLarge
			if b.MaxBytes-total < min(b.MaxFileBytes, room-perFileOverhead(f.DepotPath)) {
				reason = SkipOverByteLimit // what is left of the changelist's budget is too small
			}
			p.Skipped = append(p.Skipped, domain.SkippedFile{File: f.DepotPath, Reason: reason, Bytes: size})
			continue
		}
		bl := block{file: f, diff: diff}
		if len(diff) < size {
			bl.original = size
		}
		cost := len(diff) + perFileOverhead(f.DepotPath)
		newChunk := len(cur.blocks) == 0 || curBytes+cost > room || len(cur.blocks) >= b.MaxChunkFiles
		fileTokens := int(float64(cost) / bpt)
		if newChunk {
			fileTokens += chunkTokens
		}
		if b.MaxReviewTokens > 0 && tokens+fileTokens > b.MaxReviewTokens {
			p.Skipped = append(p.Skipped, domain.SkippedFile{File: f.DepotPath, Reason: SkipOverBudget, Bytes: size})
			continue
		}
		if bl.original > 0 {
			p.Truncated = append(p.Truncated, domain.TruncatedFile{File: f.DepotPath, ReviewedBytes: len(diff), OriginalBytes: size})
		}
		tokens += fileTokens
		if len(cur.blocks) > 0 && newChunk {
			flush()
		}
		cur.blocks = append(cur.blocks, bl)
		curBytes += cost
		total += len(diff)
		files++
	}
	flush()
	return p
}

// Prompt renders chunk c of the plan for version.
func (p Plan) Prompt(cs domain.Changeset, c Chunk, version string) Prompt {
	part := ""
	if len(p.Chunks) > 1 {
		part = fmt.Sprintf("this request holds %d of the changelist's %d changed files; the others are reviewed separately.", len(c.blocks), len(cs.Files))
	}
	return Prompt{System: SystemPrompt(version), User: renderUser(cs, version, p.description, c.blocks, c.Files(), part, p.rulesSection(c, version))}
}

// Shown returns, for each file of the chunk, the new-revision lines its
// prompt shows: the only lines a finding of the model may name.
func (c Chunk) Shown() map[string]map[int]string {
	out := make(map[string]map[int]string, len(c.blocks))
	for _, b := range c.blocks {
		out[b.file.DepotPath] = udiff.LineMap(b.diff)
	}
	return out
}
