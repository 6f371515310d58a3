package lambda_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A handler's result and error message keep their non-ASCII text as
// UTF-8, not \u escapes, in Python and Node.js alike.
func TestHandlerAnswersInUTF8(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	needs(t, "node")
	dir := handlerDir(t, map[string]string{
		"app.py": "def ok(event, context):\n    return {'msg': '注文を発送しました'}\n" +
			"def fail(event, context):\n    raise ValueError('在庫がありません')\n",
		"app.js": "exports.ok = async () => ({msg: '注文を発送しました'});\n" +
			"exports.fail = async () => { throw new Error('在庫がありません'); };\n",
	})
	reg := localRegistry(t, map[string]string{
		"pyok": "python:" + dir + ":app.ok", "pyfail": "python:" + dir + ":app.fail",
		"jsok": "node:" + dir + ":app.ok", "jsfail": "node:" + dir + ":app.fail",
	}, 0)
	for _, lang := range []string{"py", "js"} {
		res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:"+lang+"ok", `{}`)
		require.Nil(t, res.Failure, lang)
		require.Equal(t, "注文を発送しました", get(t, res.Output, "msg"), lang)
		res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:"+lang+"fail", `{}`)
		require.NotNil(t, res.Failure, lang)
		require.Contains(t, res.Failure.Cause, `在庫がありません`, lang)
		require.NotContains(t, res.Failure.Cause, `\u5728`, lang)
	}
}
