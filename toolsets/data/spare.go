package data

import (
	"context"
	"database/sql"
	"sync"
)

// spare is a query's DuckDB database opened ahead, while the query before
// runs: opening one takes about 8 ms, most of a small query's time
// (BenchmarkQuery). It holds one at most, which no query has used; the
// zero value holds none. close closes it and stops the opening of the
// next.
type spare struct {
	mu      sync.Mutex
	db      *sql.DB
	opening bool // the next is being opened
	closed  bool
	wg      sync.WaitGroup
}

// take returns the database opened ahead, or one opened now with open
// when there is none, and has the next one opened in the background.
func (s *spare) take(ctx context.Context, open func(context.Context) (*sql.DB, error)) (*sql.DB, error) {
	s.mu.Lock()
	db := s.db
	s.db = nil
	if !s.opening && !s.closed {
		s.opening = true
		s.wg.Add(1)
		go s.refill(open)
	}
	s.mu.Unlock()
	if db != nil {
		return db, nil
	}
	return open(ctx)
}

// refill opens the next database, and keeps it unless close came first.
func (s *spare) refill(open func(context.Context) (*sql.DB, error)) {
	defer s.wg.Done()
	db, err := open(context.Background())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opening = false
	if err != nil {
		return // the next query opens its own, and reports why
	}
	if s.closed || s.db != nil {
		db.Close()
		return
	}
	s.db = db
}

// close closes the database opened ahead, after the one being opened.
func (s *spare) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wg.Wait()
	if s.db != nil {
		s.db.Close()
		s.db = nil
	}
}
