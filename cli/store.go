package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"stepwise/config"
	"stepwise/store"
	"stepwise/store/pgstore"
	"stepwise/store/sqlitestore"
)

// exclusiveWait is how long a server waits for the database another
// server holds.
const exclusiveWait = 3 * time.Second

// standbyPoll is how often a waiting server tries the database's lock.
const standbyPoll = 200 * time.Millisecond

// openStore opens the server's database: a SQLite file, or PostgreSQL for
// a postgres:// URL. It returns the driver, where the data is (for the
// start-up line, without a password), and for PostgreSQL the lock that
// keeps other servers off the database.
func openStore(ctx context.Context, cfg *config.Serve, log *slog.Logger) (drv store.Driver, where string, lock *pgstore.Lock, err error) {
	if !cfg.Postgres() {
		d, err := sqlitestore.Open(ctx, cfg.DB, sqlitestore.Options{})
		if err != nil {
			return nil, "", nil, fmt.Errorf("open store %s: %w", cfg.DB, err)
		}
		where = cfg.DB
		if where != sqlitestore.Memory {
			if abs, err := filepath.Abs(where); err == nil {
				where = abs
			}
		}
		return d, where, nil, nil
	}
	where = redactURL(cfg.DB)
	d, err := pgstore.Open(ctx, cfg.DB, pgstore.Options{MaxConns: int32(cfg.DBPoolMax)})
	if err != nil {
		return nil, "", nil, fmt.Errorf("open store %s: %w", where, err)
	}
	// A server that died a moment ago may hold the lock until the
	// database notices its connection is gone.
	// A standby waits for as long as it takes.
	lock, err = d.Exclusive(ctx)
	if errors.Is(err, pgstore.ErrInUse) && cfg.Standby {
		log.Info("serve: standing by: another server holds the database; taking over when it lets go", "database", where)
	}
	for deadline := time.Now().Add(exclusiveWait); errors.Is(err, pgstore.ErrInUse) && (cfg.Standby || time.Now().Before(deadline)); {
		select {
		case <-ctx.Done():
			d.Close()
			return nil, "", nil, ctx.Err()
		case <-time.After(standbyPoll):
		}
		lock, err = d.Exclusive(ctx)
	}
	if err == nil && cfg.Standby {
		log.Info("serve: the database is free: taking over", "database", where)
	}
	if err != nil {
		d.Close()
		if errors.Is(err, pgstore.ErrInUse) {
			return nil, "", nil, fmt.Errorf("open store %s: %w: one server runs on a database at a time for now (--standby waits to take over)", where, err)
		}
		return nil, "", nil, fmt.Errorf("open store %s: %w", where, err)
	}
	return d, where, lock, nil
}

// redactURL is a database URL without its password.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the PostgreSQL database"
	}
	return u.Redacted()
}

// nodeID is the server's name among the servers of its database: the
// configured one, or the host name and a random suffix.
func nodeID(cfg *config.Serve) string {
	if cfg.NodeID != "" {
		return cfg.NodeID
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "stepwise"
	}
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, host)
	suffix := make([]byte, 3)
	rand.Read(suffix)
	return fmt.Sprintf("%.56s-%s", host, hex.EncodeToString(suffix))
}
