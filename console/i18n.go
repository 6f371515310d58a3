package console

import (
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"stepwise/history"
)

// The console speaks English and Japanese: the language comes from the
// stepwise-lang cookie (the switch on every page), else from the
// browser's Accept-Language.

const langCookie = "stepwise-lang"

var messages = map[string]map[string]string{
	"en": {
		"title": "Stepwise", "stateMachines": "State machines", "activities": "Activities", "name": "Name", "type": "Type",
		"created": "Created", "executions": "Executions", "status": "Status", "started": "Started", "stopped": "Stopped",
		"duration": "Duration", "input": "Input", "output": "Output", "error": "Error", "cause": "Cause", "redriveCount": "Redrive count",
		"warnings": "Warnings", "warningsCount": "warnings", "warningOne": "warning",
		"definition": "Definition", "graph": "Graph", "history": "Event history", "startExecution": "Start execution",
		"downloadTest": "Download as a test", "recordedRun": "Run", "latestRun": "latest",
		"executionName": "Execution name (optional)", "start": "Start", "stop": "Stop", "redrive": "Redrive", "all": "All",
		"next": "Next page", "noneYet": "None yet.", "notFound": "Not found", "notFoundText": "There is nothing here:",
		"back": "Back to the state machines", "id": "ID", "step": "Step", "elapsed": "Elapsed", "timestamp": "Timestamp",
		"details": "Details", "filter": "Filter events", "stateDetails": "State", "selectState": "Select a state in the graph to see its input, output and error.",
		"waiting": "Tasks waiting", "workers": "Recent workers", "lastPoll": "Last poll", "stateMachine": "State machine",
		"legend": "Legend", "succeeded": "Succeeded", "failed": "Failed", "caught": "Caught", "warning": "Ended with warning", "running": "Running",
		"cancelled": "Cancelled", "notRun": "Not run", "events": "events", "showing": "Showing",
		"invalidInput": "The input is not valid JSON.", "loading": "Loading…", "noDetails": "Nothing recorded for this state.",
		"confirmStop": "Stop this execution?", "confirmRedrive": "Redrive this execution?", "requestFailed": "The request failed",
		"iterations": "Iterations", "branches": "Branches", "retries": "Retries", "count": "Count",
		"refreshHistory": "The execution ended: read its full history", "fit": "Fit", "actualSize": "100%", "zoomIn": "Zoom in", "zoomOut": "Zoom out",
		"branch": "Branch", "iteration": "Iteration", "awsIndex": "#: the iteration's index, from 0 as on AWS", "iterationEvents": "Events",
		"versionsAndAliases": "Versions and aliases", "version": "Version", "alias": "Alias", "routing": "Routing", "updated": "Updated",
		"failurePolicies": "Failure policies", "state": "State", "policies": "Policies",
		"awsCost": "On AWS", "stateTransitions": "state transitions",
		"schedules": "Schedules", "expression": "Expression", "target": "Target", "lastRun": "Last run", "nextRuns": "Next runs",
		"fileTriggers": "File-arrival triggers", "watched": "Folder or bucket", "pattern": "Pattern", "lastFiles": "Last files started",
		"noFileTriggers": "No file-arrival trigger yet.",
		"eventSources":   "Event sources", "stack": "Stack", "source": "Source", "delivered": "Delivered", "lastDelivery": "Last delivery",
		"delivering": "Delivering", "notDelivering": "Not delivered", "noEventSources": "No deployed stack has event sources.",
		"eventSourcesHint":    "What the deployed templates say triggers what: queues, topics, buckets, rules and APIs, and the functions and state machines their events reach.",
		"failurePoliciesHint": "Set by this state machine's stepwise:policy/ tags: these states fail unlike on AWS (finish-running lets running branches or iterations end; retry-failed-items retries only the iterations that failed).",
		"mapRuns":             "Map runs", "mapRun": "Map run", "parentExecution": "parent execution", "maxConcurrency": "Max concurrency",
		"toleratedFailures": "Tolerated failures", "pending": "Pending", "timedOut": "Timed out", "aborted": "Aborted", "total": "Total",
		"items": "Items", "childExecutions": "Child executions", "moreChildren": "The first 100 child executions are listed; list all with ListExecutions and the map run's ARN.",
		"signIn": "Sign in", "signOut": "Sign out", "accessKeyId": "Access key ID", "secretAccessKey": "Secret access key",
		"signInHelp":   "Sign in with an access key of the server's credentials file.",
		"signInFailed": "The access key ID or the secret access key is not right.",
		"inMapRun":     "In a map run", "startedBy": "Started by", "attempts": "Attempts", "childExecution": "Child execution",
		"lastAttempt": "last attempt",
		// Statuses, time zones and errors.
		"RUNNING": "RUNNING", "SUCCEEDED": "SUCCEEDED", "FAILED": "FAILED", "TIMED_OUT": "TIMED_OUT", "ABORTED": "ABORTED",
		"PENDING_REDRIVE": "PENDING_REDRIVE", "ENABLED": "ENABLED", "DISABLED": "DISABLED",
		"timeZone": "Time zone", "timeZoneHint": "Times are in this zone; a schedule's in its own.", "utc": "UTC",
		"errorTitle": "Something went wrong", "errorText": "This page could not be read:",
		"minutes": "min", "seconds": "s", "graphStart": "Start", "graphEnd": "End",
		// Lists: searches, filters, a schedule's page.
		"namePrefix": "Name starts with", "search": "Search", "clearSearch": "Clear", "noMatch": "Nothing matches.",
		"searchMore":  "Nothing matches among the executions read so far: the next page reads older ones.",
		"startedFrom": "Started from", "startedTo": "to", "badTimeZone": "Unknown time zone:",
		"badFrom": "The start of the window is not right:", "badTo": "The end of the window is not right:",
		"badWindow": "The window's start must be before its end.",
		"schedule":  "Schedule", "timezone": "Time zone", "flexibleWindow": "Flexible time window", "retryPolicy": "Retry policy",
		"deadLetterQueue": "Dead-letter queue", "calendar": "Calendar", "notAWS": "Unlike on AWS", "recentExecutions": "Recent executions",
		"enable": "Enable", "disable": "Disable", "scheduleDisabled": "The schedule is disabled: it fires no slot until it is enabled.",
		"maxEventAge": "Maximum event age", "maxRetries": "Maximum retry attempts", "off": "Off",
		"startDate": "Start date", "endDate": "End date", "afterCompletion": "After completion", "description": "Description",
		"scheduleExecutionsHint": "Executions of the target whose name the schedule gives:", "none": "None",
		"scheduleENABLED": "Enabled", "scheduleDISABLED": "Disabled", "flexibleWithin": "Within",
		"skipNextRun": "Skip next run", "releaseHold": "Run it after all", "heldRun": "Held: this run is skipped, the ones after it fire:",
		"skippedRuns":         "Skipped by a hold:",
		"afterCompletionNONE": "Keep the schedule", "afterCompletionDELETE": "Delete the schedule",
		// What a schedule asks that AWS would not do (scheduler.Difference).
		"note.calendar":           "The calendar %s (rule %s, from the group's tags) %s: EventBridge Scheduler fires every slot of the expression.",
		"note.rule.skip":          "skips a slot that falls on a day off",
		"note.rule.next":          "moves a slot that falls on a day off to the next business day",
		"note.rule.previous":      "moves a slot that falls on a day off to the business day before",
		"note.name-placeholders":  "The execution name uses Stepwise's placeholders (<stepwise.…>): EventBridge Scheduler passes the Name as written, and StartExecution refuses its < and >.",
		"note.input-placeholders": "The input uses Stepwise's placeholders (<stepwise.…>): EventBridge Scheduler substitutes only its own (<aws.scheduler.…>) and leaves these as written.",
		"note.not-fired":          "Not fired:",
		// Operator controls.
		"operatorControls": "Operator controls", "operatorActions": "Operator actions", "held": "Held", "suspended": "Suspended", "waitingFor": "Waiting for %s",
		"hold": "Hold", "release": "Release", "suspend": "Suspend", "resume": "Resume", "skip": "Skip", "kill": "Kill",
		"operatorStateHint": "Select a state in the graph, or here. A hold makes the execution wait before the state (a state that runs goes on; the hold is for its next entries) until it is released.",
		"skipHint":          "A Task state that runs, waits to retry or is held ends as succeeded with this output; the next state gets it.",
		"killHint":          "A Task state's running task fails with this error and cause (Retry and Catch apply); its work is stopped.",
		"skipOutput":        "Output (JSON)", "killError": "Error name", "when": "When", "who": "Who", "what": "Action",
		"invalidOutput": "The output is not valid JSON.", "confirmKill": "Kill the running task of this state?",
		"confirmSkip":    "End this state as succeeded with this output?",
		"holdForAll":     "Hold a state in every execution",
		"holdForAllHint": "Every running execution of this state machine, and every one started until the release, waits before the held state.",
		"op.Hold":        "Hold", "op.Release": "Release", "op.Suspend": "Suspend", "op.Resume": "Resume", "op.Skip": "Skip", "op.Kill": "Kill",
		"op.Rerun": "Rerun", "op.Redrive": "Redrive", "correctedDefinition": "Corrected definition",
		// Reruns.
		"rerun": "Rerun", "preview": "Preview", "rerunFrom": "Run again from",
		"rerunHint":    "The execution runs again as itself (its history goes on, its redrive count goes up). Preview what runs again, then rerun.",
		"rerun.FAILED": "The failed states (FAILED)", "rerun.NEXT": "The state after the failed one (NEXT)", "rerun.STATE": "A state (STATE)",
		"rerun.TOP": "The first state (TOP)", "rerun.WARNINGS": "The states that ended with warning (WARNINGS)",
		"rerunOutput": "The failed state's output (JSON)",
		"rerunMode":   "Mode", "rerunStart": "Starts at", "rerunStates": "Run again", "keptStates": "Keep their results",
		"addedStates": "Added states", "removedStates": "Removed states", "changedStates": "Changed states",
		"failedStates": "the failed states", "confirmRerun": "Rerun this execution as previewed?",
	},
	"ja": {
		"title": "Stepwise", "stateMachines": "ステートマシン", "activities": "アクティビティ", "name": "名前", "type": "タイプ",
		"created": "作成日時", "executions": "実行", "status": "ステータス", "started": "開始", "stopped": "終了",
		"duration": "所要時間", "input": "入力", "output": "出力", "error": "エラー", "cause": "原因", "redriveCount": "リドライブ回数",
		"warnings": "警告", "warningsCount": "件の警告終了", "warningOne": "件の警告終了",
		"definition": "定義", "graph": "グラフ", "history": "イベント履歴", "startExecution": "実行を開始",
		"downloadTest": "テストとしてダウンロード", "recordedRun": "実行回", "latestRun": "最新",
		"executionName": "実行名 (任意)", "start": "開始", "stop": "停止", "redrive": "リドライブ", "all": "すべて",
		"next": "次のページ", "noneYet": "まだありません。", "notFound": "見つかりません", "notFoundText": "ここには何もありません:",
		"back": "ステートマシン一覧へ戻る", "id": "ID", "step": "ステップ", "elapsed": "経過時間", "timestamp": "タイムスタンプ",
		"details": "詳細", "filter": "イベントを絞り込む", "stateDetails": "ステート", "selectState": "グラフのステートを選ぶと、その入力・出力・エラーが表示されます。",
		"waiting": "待機中のタスク", "workers": "最近のワーカー", "lastPoll": "最後のポーリング", "stateMachine": "ステートマシン",
		"legend": "凡例", "succeeded": "成功", "failed": "失敗", "caught": "キャッチ済み", "warning": "警告終了", "running": "実行中",
		"cancelled": "キャンセル", "notRun": "未実行", "events": "件のイベント", "showing": "表示中",
		"invalidInput": "入力が正しい JSON ではありません。", "loading": "読み込み中…", "noDetails": "このステートの記録はありません。",
		"confirmStop": "この実行を停止しますか?", "confirmRedrive": "この実行をリドライブ (失敗したところから再開) しますか?", "requestFailed": "リクエストに失敗しました",
		"iterations": "イテレーション", "branches": "ブランチ", "retries": "リトライ", "count": "件数",
		"refreshHistory": "実行が終了しました: 履歴をすべて読み込む", "fit": "全体表示", "actualSize": "100%", "zoomIn": "拡大", "zoomOut": "縮小",
		"branch": "ブランチ", "iteration": "イテレーション", "awsIndex": "#: イテレーションのインデックス (AWS と同じく 0 から)", "iterationEvents": "イベント",
		"versionsAndAliases": "バージョンとエイリアス", "version": "バージョン", "alias": "エイリアス", "routing": "ルーティング", "updated": "更新日時",
		"failurePolicies": "失敗時のポリシー", "state": "ステート", "policies": "ポリシー",
		"awsCost": "AWS での料金", "stateTransitions": "回の状態遷移",
		"schedules": "スケジュール", "expression": "式", "target": "ターゲット", "lastRun": "前回の実行", "nextRuns": "次回の実行",
		"fileTriggers": "ファイル到着トリガー", "watched": "フォルダーまたはバケット", "pattern": "パターン", "lastFiles": "最近開始したファイル",
		"noFileTriggers": "ファイル到着トリガーはまだありません。",
		"eventSources":   "イベントソース", "stack": "スタック", "source": "ソース", "delivered": "配信数", "lastDelivery": "前回の配信",
		"delivering": "配信中", "notDelivering": "配信されていません", "noEventSources": "イベントソースのあるスタックはデプロイされていません。",
		"eventSourcesHint":    "デプロイしたテンプレートに書かれた、何が何を起動するか: キュー、トピック、バケット、ルール、API と、そのイベントが届く関数とステートマシン。",
		"failurePoliciesHint": "このステートマシンの stepwise:policy/ タグによる設定です。これらのステートは AWS とは異なる失敗の仕方をします (finish-running は実行中のブランチやイテレーションを最後まで実行し、retry-failed-items は失敗したイテレーションだけをリトライします)。",
		"mapRuns":             "マップラン", "mapRun": "マップラン", "parentExecution": "親の実行", "maxConcurrency": "最大同時実行数",
		"toleratedFailures": "許容する失敗", "pending": "保留中", "timedOut": "タイムアウト", "aborted": "中止", "total": "合計",
		"items": "アイテム", "childExecutions": "子ワークフローの実行", "moreChildren": "子ワークフローの実行は最初の 100 件を表示しています。すべては ListExecutions にマップランの ARN を指定して取得できます。",
		"signIn": "サインイン", "signOut": "サインアウト", "accessKeyId": "アクセスキー ID", "secretAccessKey": "シークレットアクセスキー",
		"signInHelp":   "サーバーの認証情報ファイルにあるアクセスキーでサインインしてください。",
		"signInFailed": "アクセスキー ID またはシークレットアクセスキーが正しくありません。",
		"inMapRun":     "マップランで実行", "startedBy": "起動元の実行", "attempts": "試行", "childExecution": "子ワークフローの実行",
		"lastAttempt": "最後の試行",
		// Statuses, time zones and errors.
		"RUNNING": "実行中", "SUCCEEDED": "成功", "FAILED": "失敗", "TIMED_OUT": "タイムアウト", "ABORTED": "中止",
		"PENDING_REDRIVE": "リドライブ待ち", "ENABLED": "有効", "DISABLED": "無効",
		"timeZone": "タイムゾーン", "timeZoneHint": "時刻はこのタイムゾーンで表示します (スケジュールの時刻はそのスケジュールのタイムゾーン)。", "utc": "UTC",
		"errorTitle": "エラーが発生しました", "errorText": "このページを読み込めませんでした:",
		"minutes": "分", "seconds": "秒", "graphStart": "開始", "graphEnd": "終了",
		// Lists: searches, filters, a schedule's page.
		"namePrefix": "名前の先頭", "search": "検索", "clearSearch": "クリア", "noMatch": "一致するものはありません。",
		"searchMore":  "ここまでに読んだ実行には一致するものがありません。次のページでさらに古い実行を読みます。",
		"startedFrom": "開始日時 (から)", "startedTo": "まで", "badTimeZone": "不明なタイムゾーンです:",
		"badFrom": "期間の開始が正しくありません:", "badTo": "期間の終了が正しくありません:",
		"badWindow": "期間の開始は終了より前にしてください。",
		"schedule":  "スケジュール", "timezone": "タイムゾーン", "flexibleWindow": "フレキシブルタイムウィンドウ", "retryPolicy": "再試行ポリシー",
		"deadLetterQueue": "デッドレターキュー", "calendar": "カレンダー", "notAWS": "AWS との違い", "recentExecutions": "最近の実行",
		"enable": "有効にする", "disable": "無効にする", "scheduleDisabled": "このスケジュールは無効です。有効にするまで実行されません。",
		"maxEventAge": "イベントの最大有効期間", "maxRetries": "最大再試行回数", "off": "オフ",
		"startDate": "開始日", "endDate": "終了日", "afterCompletion": "完了後の動作", "description": "説明",
		"scheduleExecutionsHint": "スケジュールが名前を付けたターゲットの実行:", "none": "なし",
		"scheduleENABLED": "有効", "scheduleDISABLED": "無効", "flexibleWithin": "最大",
		"skipNextRun": "次回の実行を保留", "releaseHold": "保留を解除", "heldRun": "保留中: この実行はスキップされ、その後の実行は通常どおり行われます:",
		"skippedRuns":         "保留でスキップした実行:",
		"afterCompletionNONE": "スケジュールを残す", "afterCompletionDELETE": "スケジュールを削除する",
		// What a schedule asks that AWS would not do (scheduler.Difference).
		"note.calendar":           "カレンダー %s (ルール %s、グループのタグによる) は%s。EventBridge Scheduler は式のすべての時刻に実行します。",
		"note.rule.skip":          "休業日にあたる時刻の実行を見送ります",
		"note.rule.next":          "休業日にあたる時刻の実行を翌営業日に移します",
		"note.rule.previous":      "休業日にあたる時刻の実行を前営業日に移します",
		"note.name-placeholders":  "実行名に Stepwise のプレースホルダー (<stepwise.…>) を使っています。EventBridge Scheduler は実行名を書かれたとおりに渡し、StartExecution は < と > を含む名前を拒否します。",
		"note.input-placeholders": "入力に Stepwise のプレースホルダー (<stepwise.…>) を使っています。EventBridge Scheduler が置き換えるのは自身のもの (<aws.scheduler.…>) だけで、これらは書かれたとおりに残ります。",
		"note.not-fired":          "実行されません:",
		// オペレーター操作。
		"operatorControls": "運用操作", "operatorActions": "オペレーター操作", "held": "保留中", "suspended": "中断中", "waitingFor": "%s の終了待ち",
		"hold": "保留", "release": "保留解除", "suspend": "中断", "resume": "再開", "skip": "スキップ", "kill": "強制終了",
		"operatorStateHint": "グラフまたはここで状態を選びます。保留すると、解除されるまで実行はその状態の前で待ちます (実行中の状態はそのまま続き、保留は次に入るときから効きます)。",
		"skipHint":          "実行中・リトライ待ち・保留中の Task 状態を、この出力で成功として終えます。次の状態はこの出力を受け取ります。",
		"killHint":          "Task 状態の実行中のタスクを、このエラーと原因で失敗させ (Retry と Catch が効きます)、その処理を止めます。",
		"skipOutput":        "出力 (JSON)", "killError": "エラー名", "when": "日時", "who": "操作者", "what": "操作",
		"invalidOutput": "出力が正しい JSON ではありません。", "confirmKill": "この状態の実行中のタスクを強制終了しますか?",
		"confirmSkip":    "この出力でこの状態を成功として終えますか?",
		"holdForAll":     "すべての実行で状態を保留",
		"holdForAllHint": "このステートマシンの実行中のすべての実行と、解除までに開始される実行は、保留中の状態の前で待ちます。",
		"op.Hold":        "保留", "op.Release": "保留解除", "op.Suspend": "中断", "op.Resume": "再開", "op.Skip": "スキップ", "op.Kill": "強制終了",
		"op.Rerun": "再実行", "op.Redrive": "リドライブ", "correctedDefinition": "修正した定義",
		// 再実行。
		"rerun": "再実行", "preview": "プレビュー", "rerunFrom": "再実行の開始位置",
		"rerunHint":    "同じ実行として再実行します (履歴は続き、再実行回数が増えます)。再実行される状態をプレビューしてから再実行します。",
		"rerun.FAILED": "失敗した状態から", "rerun.NEXT": "失敗した状態の次から", "rerun.STATE": "指定した状態から",
		"rerun.TOP": "最初の状態から", "rerun.WARNINGS": "警告で終わった状態から",
		"rerunOutput": "失敗した状態の出力 (JSON)",
		"rerunMode":   "モード", "rerunStart": "開始する状態", "rerunStates": "再実行する状態", "keptStates": "結果を引き継ぐ状態",
		"addedStates": "追加された状態", "removedStates": "削除された状態", "changedStates": "変更された状態",
		"failedStates": "失敗した状態", "confirmRerun": "プレビューのとおりに再実行しますか?",
	},
}

// scriptMessages are the messages the page's script writes itself.
var scriptMessages = []string{"invalidInput", "loading", "noDetails", "confirmStop", "confirmRedrive", "requestFailed",
	"awsIndex", "fit", "actualSize", "zoomIn", "zoomOut", "graph", "retries", "duration", "error", "cause", "input", "output", "iterations", "branches", "branch",
	"iteration", "iterationEvents", "id", "type", "step", "elapsed", "attempts", "childExecution", "mapRun", "started", "lastAttempt",
	"succeeded", "warning", "failed", "caught", "running", "cancelled", "notRun", "inMapRun", "RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT",
	"ABORTED", "PENDING_REDRIVE", "timeZone", "timeZoneHint", "utc", "minutes", "seconds", "graphStart", "graphEnd",
	"held", "suspended", "invalidOutput", "confirmKill", "confirmSkip",
	"rerunMode", "rerunStart", "rerunStates", "keptStates", "addedStates", "removedStates", "changedStates", "failedStates", "none", "confirmRerun"}

// language picks the page's language for a request.
func language(r *http.Request) string {
	if c, err := r.Cookie(langCookie); err == nil {
		if _, ok := messages[c.Value]; ok {
			return c.Value
		}
	}
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag := strings.ToLower(strings.TrimSpace(strings.SplitN(part, ";", 2)[0]))
		switch {
		case strings.HasPrefix(tag, "ja"):
			return "ja"
		case strings.HasPrefix(tag, "en"):
			return "en"
		}
	}
	return "en"
}

// translate returns a message in a language (the key when it has none).
func translate(lang, key string) string {
	if m, ok := messages[lang][key]; ok {
		return m
	}
	return key
}

// noteText is a schedule's Note in a language.
func noteText(lang string, n Note) string {
	switch n.Kind {
	case "calendar":
		return fmt.Sprintf(translate(lang, "note.calendar"), n.Calendar, n.Rule, translate(lang, "note.rule."+n.Rule))
	case "not-fired":
		return translate(lang, "note.not-fired") + " " + n.Detail
	}
	return translate(lang, "note."+n.Kind)
}

// statusName is a status in a language: an execution's, a map run's or
// a schedule's (RUNNING, ENABLED) or a state's (succeeded, not-run);
// unknown ones as they are.
func statusName(lang, status string) string {
	key := map[string]string{"not-run": "notRun", "map-run": "inMapRun"}[status]
	if key == "" {
		key = status
	}
	if m, ok := messages[lang][key]; ok {
		return m
	}
	return status
}

// The pages write each time as a <time> element: the instant in RFC 3339
// (UTC) and its text in UTC, which the page's script rewrites in the
// browser's time zone or in UTC, as the switch in the header says. A
// schedule's times are written in its own zone (data-zone), and stay in it.

const rfc3339Millis = "2006-01-02T15:04:05.000Z07:00"

// timeHTML is a time as a <time> element; nothing for the zero time.
func timeHTML(t time.Time) template.HTML {
	if t.IsZero() {
		return ""
	}
	return template.HTML(`<time datetime="` + t.UTC().Format(rfc3339Millis) + `">` + formatTime(t) + `</time>`)
}

// zonedHTML is a time (time.Time or *time.Time) in a schedule's zone
// (an IANA name; UTC when empty or unknown), named by its abbreviation.
func zonedHTML(v any, zone string) template.HTML {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case *time.Time:
		if x != nil {
			t = *x
		}
	}
	if t.IsZero() {
		return ""
	}
	loc, err := time.LoadLocation(zone)
	if zone == "" || err != nil {
		loc, zone = time.UTC, "UTC"
	}
	return template.HTML(`<time datetime="` + t.UTC().Format(rfc3339Millis) + `" data-zone="` + template.HTMLEscapeString(zone) + `">` +
		template.HTMLEscapeString(t.In(loc).Format("2006-01-02 15:04:05")+" "+zoneLabel(t.In(loc))) + `</time>`)
}

// zoneLabel names the zone of a time by its offset from UTC: "UTC",
// "UTC+9", "UTC+5:30", "UTC-4". The page's script (zoneLabel in
// static/times.js) names zones by the same rule, so that a page names
// each zone one way, whichever side wrote the time.
func zoneLabel(t time.Time) string {
	_, off := t.Zone()
	if off == 0 {
		return "UTC"
	}
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	label := "UTC" + sign + strconv.Itoa(off/3600)
	if m := off % 3600 / 60; m != 0 {
		label += fmt.Sprintf(":%02d", m)
	}
	return label
}

func init() {
	funcs["note"] = noteText
	funcs["status"] = statusName
	funcs["zoned"] = zonedHTML
}

// clockHTML is timeHTML for a time.Time, *time.Time or *history.EpochTime.
func clockHTML(v any) template.HTML {
	switch x := v.(type) {
	case time.Time:
		return timeHTML(x)
	case *time.Time:
		if x != nil {
			return timeHTML(*x)
		}
	case *history.EpochTime:
		if x != nil {
			return timeHTML(time.Time(*x))
		}
	}
	return ""
}

// problem renders the page of what is not there (err nil) or could not
// be read (err's text as it is), in the page's language.
func (c *Console) problem(w http.ResponseWriter, r *http.Request, status int, what string, err error) {
	lang := language(r)
	title, text := "notFound", "notFoundText"
	if err != nil {
		title, text = "errorTitle", "errorText"
	}
	data := struct {
		page
		What, Heading, Text, Err string
	}{c.newPage(r, translate(lang, title)), what, translate(lang, title), translate(lang, text), ""}
	if err != nil {
		data.Err = err.Error()
	}
	c.render(w, status, "notfound", data)
}
