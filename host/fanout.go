package host

import "sync"

// fanOut runs fn on each named server at once, i being the name's index,
// and returns in the order of names the failure of each as a *ServerError
// (nil where fn succeeded). A name that is not configured fails without
// running fn.
func (h *Host) fanOut(names []string, fn func(i int, s *server) error) []error {
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		s, err := h.server(n)
		if err != nil {
			errs[i] = &ServerError{Server: n, Err: err}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(i, s); err != nil {
				errs[i] = &ServerError{Server: n, Err: err}
			}
		}()
	}
	wg.Wait()
	return errs
}
