package p4

import "context"

// ProveProtections runs, now, the proof CheckProtections makes before every
// fetch (see there), for the pre-flight (shared/doctor): its error is the
// fetch's refusal, naming the reason and the line; on success it returns
// the protection lines read, in table order, as the proof's log names them.
func (f *Fetcher) ProveProtections(ctx context.Context) ([]string, error) {
	lines, err := f.CheckProtections().verifyProtections(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, l.String())
	}
	return out, nil
}
