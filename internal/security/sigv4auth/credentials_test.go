package sigv4auth_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/internal/security/sigv4auth"
)

func TestParseCredentials(t *testing.T) {
	t.Parallel()
	c, err := sigv4auth.ParseCredentials(strings.NewReader("\ufeff# team keys\n" +
		"[default]\n" +
		"aws_access_key_id = AKIDDEFAULT\n" +
		"aws_secret_access_key=secret/one+\n" +
		"region = eu-west-1\n" +
		"\n" +
		"; the CI's\n" +
		"[profile ci]\n" +
		"  aws_access_key_id=AKIDCI  \n" +
		"  AWS_SECRET_ACCESS_KEY = two = with equals\n" +
		"aws_session_token = ignored\n" +
		"[settings-only]\n" +
		"region = us-east-1\n"))
	require.NoError(t, err)
	require.Equal(t, []string{"AKIDCI", "AKIDDEFAULT"}, c.AccessKeyIDs())
	s, ok := c.Secret("AKIDDEFAULT")
	require.True(t, ok)
	require.Equal(t, "secret/one+", s)
	s, ok = c.Secret("AKIDCI")
	require.True(t, ok)
	require.Equal(t, "two = with equals", s)
	require.Equal(t, "ci", c.Profile("AKIDCI"))
	_, ok = c.Secret("AKIDNOBODY")
	require.False(t, ok)
}

func TestParseCredentialsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, err string }{
		{"", "no access keys: add a [profile] with aws_access_key_id and aws_secret_access_key"},
		{"[a]\nregion = x\n", "no access keys: add a [profile] with aws_access_key_id and aws_secret_access_key"},
		{"[a]\naws_access_key_id = K\n", "profile a: aws_access_key_id without aws_secret_access_key"},
		{"[a]\naws_secret_access_key = S\n", "profile a: aws_secret_access_key without aws_access_key_id"},
		{"aws_access_key_id = K\n", "line 1: aws_access_key_id outside of a [profile] section"},
		{"[a\n", "line 1: a section header must end with ']'"},
		{"[]\n", "line 1: empty profile name"},
		{"[a]\njunk\n", "line 2: expected key = value"},
		{"[a]\naws_access_key_id = K/1\naws_secret_access_key = S\n", `profile a: access key id "K/1": must not contain '/', ',', '=' or spaces`},
		{"[a]\naws_access_key_id = K\naws_secret_access_key = S\n[b]\naws_access_key_id = K\naws_secret_access_key = T\n",
			"profile b: access key id K is also in profile a, with another secret"},
	} {
		_, err := sigv4auth.ParseCredentials(strings.NewReader(tc.text))
		require.EqualError(t, err, tc.err, "%q", tc.text)
	}
}

func TestLoadCredentials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "credentials")
	require.NoError(t, os.WriteFile(path, []byte("[default]\naws_access_key_id=K\naws_secret_access_key=S\n"), 0o600))
	c, err := sigv4auth.LoadCredentials(path)
	require.NoError(t, err)
	require.Equal(t, 1, c.Len())
	_, err = sigv4auth.LoadCredentials(filepath.Join(dir, "missing"))
	require.ErrorContains(t, err, "credentials: stat ")
	require.NoError(t, os.WriteFile(path, []byte("[default]\naws_access_key_id=K\n"), 0o600))
	_, err = sigv4auth.LoadCredentials(path)
	require.EqualError(t, err, "credentials "+path+": profile default: aws_access_key_id without aws_secret_access_key")
}
