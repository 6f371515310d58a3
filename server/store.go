package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"stepwise/config"
	"stepwise/store"
	"stepwise/store/migrate"
	"stepwise/store/pgstore"
	"stepwise/store/sqlitestore"
)

// openStore opens the server's database: a SQLite file, or PostgreSQL for
// a postgres:// URL. It returns the driver, and where the data is (for the
// start-up line, without a password).
func openStore(ctx context.Context, cfg *config.Serve, log *slog.Logger) (drv store.Driver, where string, err error) {
	// An upgrade may rewrite whole tables (migration 016 moves every
	// history): say so before a start that may take a while.
	upgrading := func(m migrate.Migration) {
		log.Info("store: upgrading the database, which may take a while on a large one", "migration", fmt.Sprintf("%03d_%s", m.Version, m.Name))
	}
	if !cfg.Postgres() {
		d, err := sqlitestore.Open(ctx, cfg.DB, sqlitestore.Options{Upgrading: upgrading})
		if err != nil {
			return nil, "", fmt.Errorf("open store %s: %w", cfg.DB, err)
		}
		where = cfg.DB
		if where != sqlitestore.Memory {
			if abs, err := filepath.Abs(where); err == nil {
				where = abs
			}
		}
		return d, where, nil
	}
	where = redactURL(cfg.DB)
	d, err := pgstore.Open(ctx, cfg.DB, pgstore.Options{MaxConns: int32(cfg.DBPoolMax), Upgrading: upgrading})
	if err != nil {
		return nil, "", fmt.Errorf("open store %s: %w", where, err)
	}
	return d, where, nil
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
