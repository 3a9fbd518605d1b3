package readmodel

// Applied is the last sequence of each stream the fold has applied: with the streams'
// last sequences, how far the read model lags behind them.
func (s *Store) Applied() (spec, status uint64) {
	p := s.progress.checkpoints()
	return p.spec, p.status
}
