package api

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/vmop/vmop/pkg/events"
	"github.com/vmop/vmop/pkg/model"
	"github.com/vmop/vmop/services/api/admission"
	"github.com/vmop/vmop/services/api/announce"
	"github.com/vmop/vmop/services/api/apply"
	"github.com/vmop/vmop/services/api/auth"
	"github.com/vmop/vmop/services/api/finalize"
	"github.com/vmop/vmop/services/api/kubeevents"
	"github.com/vmop/vmop/services/api/quota"
	"github.com/vmop/vmop/services/api/readmodel"
)

// Config is everything the gateway needs; the stack fills it from the environment.
type Config struct {
	Listener net.Listener // where to serve HTTPS; Addr is used when nil
	Addr     string
	DataDir  string // holds the read model
	Certs    Certificates
	Tokens   auth.TokensFile // the callers, when TokensPath is ""
	// TokensPath is the tokens file: read at start and again whenever it changes.
	TokensPath      string
	PrivilegedUsers []string
	JetStream       jetstream.JetStream
	Seed            []map[string]any // objects ensured on start (the seeded inventory)
	Namespaces      NamespaceSettings
	Logger          *slog.Logger
	// RequestTimeout bounds reading a request and writing its response (default 60s, as
	// kube-apiserver's request timeout); a watch runs until its timeoutSeconds instead,
	// each of its writes bounded by it.
	RequestTimeout time.Duration
	// MaxWatchesPerUser is how many watches one user may have open (default 100); more
	// are 429 Too Many Requests.
	MaxWatchesPerUser int
	// WatchBookmarkInterval is how often a watch that allows bookmarks gets one (default a
	// minute, as kube-apiserver sends them).
	WatchBookmarkInterval time.Duration
}

// NamespaceSettings are the per-namespace settings of api-rules §0.4; for now one set
// applies to every namespace.
type NamespaceSettings = model.NamespaceSettings

// Defaults of Config's bounds.
const (
	defaultRequestTimeout    = 60 * time.Second
	defaultMaxWatchesPerUser = 100
	defaultBookmarkInterval  = time.Minute
)

// Run serves the API until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	tokens, loaded := cfg.Tokens, []byte(nil)
	if cfg.TokensPath != "" { // first: a tokens file that cannot be used stops the start
		var err error
		if tokens, loaded, err = auth.LoadTokensFile(cfg.TokensPath); err != nil {
			return err
		}
	}
	if err := events.Setup(ctx, cfg.JetStream); err != nil {
		return fmt.Errorf("set up streams: %w", err)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	rm, err := readmodel.Open(filepath.Join(cfg.DataDir, "readmodel.db"))
	if err != nil {
		return fmt.Errorf("open read model: %w", err)
	}
	defer rm.Close()

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() { cancel(rm.Fold(ctx, cfg.JetStream)) }()
	kevents, err := kubeevents.Open(filepath.Join(cfg.DataDir, "events.db"), log)
	if err != nil {
		return fmt.Errorf("open events: %w", err)
	}
	defer kevents.Close()
	foldingEvents := make(chan struct{})
	defer func() { cancel(nil); <-foldingEvents }() // Fold, its writer, ends before Close
	go func() {
		defer close(foldingEvents)
		if err := kevents.Fold(ctx, cfg.JetStream); err != nil {
			cancel(fmt.Errorf("fold events: %w", err))
		}
	}()

	specs := &specWriter{js: cfg.JetStream}
	authn := auth.NewAuthenticator(tokens, cfg.PrivilegedUsers)
	fields, err := apply.New()
	if err != nil {
		return err
	}
	s := &server{
		auth:   authn,
		specs:  specs,
		rm:     rm,
		heads:  readmodel.NewHeads(cfg.JetStream),
		events: eventFeed{store: kevents, js: cfg.JetStream},
		admit:  admission.New(rm, cfg.Namespaces),
		fields: fields,
		log:    log,

		requestTimeout: cmp.Or(cfg.RequestTimeout, defaultRequestTimeout),
		watches:        newWatchLimit(cmp.Or(cfg.MaxWatchesPerUser, defaultMaxWatchesPerUser)),
		bookmarkEvery:  cmp.Or(cfg.WatchBookmarkInterval, defaultBookmarkInterval),
		seeded:         make(chan struct{}),
	}
	s.metrics = newMetrics(cfg.JetStream, rm, s.watches)
	quotas := quota.NewGate()
	s.quotas = quotas
	s.metrics.registry.MustRegister(quotas.Metrics())
	if cfg.TokensPath != "" {
		go authn.ReloadTokens(ctx, cfg.TokensPath, loaded, log)
	}
	finalize.Start(ctx, specs, rm, s.waitCurrent, log)
	quota.Start(ctx, cfg.JetStream, rm, log)
	defer announce.Start(ctx, cancel, cfg.JetStream, rm, cfg.DataDir, log)()
	go func() {
		if err := s.seed(ctx, cfg.Seed); err != nil {
			cancel(fmt.Errorf("seed inventory: %w", err))
		}
	}()
	return s.serve(ctx, cfg)
}

func (s *server) serve(ctx context.Context, cfg Config) error {
	cert, err := tls.LoadX509KeyPair(cfg.Certs.CertFile, cfg.Certs.KeyFile)
	if err != nil {
		return fmt.Errorf("load serving certificate: %w", err)
	}
	ln := cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return fmt.Errorf("listen: %w", err)
		}
	}
	srv := &http.Server{
		Handler:           otelhttp.NewHandler(s.routes(), "vmop-api"),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: min(10*time.Second, s.requestTimeout),
		ReadTimeout:       s.requestTimeout,
		WriteTimeout:      s.requestTimeout,
		IdleTimeout:       2 * s.requestTimeout,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return nil
}
