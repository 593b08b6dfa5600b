package origin

// ScanWaiters is how many callers wait for the running scan of url (a
// normalised URL), so tests can let a held site go once every client joined.
func (s *Server) ScanWaiters(url string) int { return s.scans.flights.waiting(url) }
