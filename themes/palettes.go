package themes

// The palettes. Dark and light follow glamour's dark and light styles
// (heading blue, grey body text) so the transcript and the chrome around it
// agree; their text colours reach a contrast ratio of 4.5:1 (WCAG AA) on a
// typical background of their kind. The high-contrast ones keep every text
// colour at 7:1 or more against pure black or white (WCAG AAA), draw bars
// and the selection as solid blocks, and give each tool outcome its own
// hue. themes_test.go checks these ratios.

var darkPalette = Palette{
	Text:  "#DADADA",
	Muted: "#8A8A8A",
	Faint: "#5F5F5F",

	Accent:    "#00AFFF",
	User:      "#AF87FF",
	Assistant: "#5FD7AF",
	Thinking:  "#808080",

	Border:      "#4E4E4E",
	BorderFocus: "#00AFFF",

	Running:   "#00AFFF",
	Success:   "#5FD75F",
	Error:     "#FF5F5F",
	Warning:   "#FFD75F",
	Denied:    "#FF875F",
	Timeout:   "#FFAF00",
	Cancelled: "#A8A8A8",
	Cost:      "#D7AF87",

	SelectionFg: "#FFFFFF",
	SelectionBg: "#3A3A7A",
	HeaderFg:    "#FFFFFF",
	HeaderBg:    "#3A3A7A",
	StatusBarFg: "#D0D0D0",
	StatusBarBg: "#303030",
	StatusKey:   "#5FD7FF",

	DialogBorder: "#FFAF00",
	DialogTitle:  "#FFD75F",
}

var lightPalette = Palette{
	Text:  "#262626",
	Muted: "#6C6C6C",
	Faint: "#A8A8A8",

	Accent:    "#005FD7",
	User:      "#8700AF",
	Assistant: "#00875F",
	Thinking:  "#808080",

	Border:      "#BCBCBC",
	BorderFocus: "#005FD7",

	Running:   "#005FD7",
	Success:   "#008700",
	Error:     "#D70000",
	Warning:   "#AF5F00",
	Denied:    "#C04A00",
	Timeout:   "#8A6A00",
	Cancelled: "#767676",
	Cost:      "#875F00",

	SelectionFg: "#000000",
	SelectionBg: "#AFD7FF",
	HeaderFg:    "#FFFFFF",
	HeaderBg:    "#005FD7",
	StatusBarFg: "#262626",
	StatusBarBg: "#E4E4E4",
	StatusKey:   "#005FD7",

	DialogBorder: "#AF5F00",
	DialogTitle:  "#875F00",
}

var hcDarkPalette = Palette{
	Text:  "#FFFFFF",
	Muted: "#D0D0D0",
	Faint: "#A8A8A8",

	Accent:    "#00FFFF",
	User:      "#FFFF00",
	Assistant: "#87FFFF",
	Thinking:  "#D0D0D0",

	Border:      "#FFFFFF",
	BorderFocus: "#FFFF00",

	Running:   "#00FFFF",
	Success:   "#00FF00",
	Error:     "#FF6060",
	Warning:   "#FFFF00",
	Denied:    "#FFA040",
	Timeout:   "#FF80FF",
	Cancelled: "#D0D0D0",
	Cost:      "#FFD700",

	SelectionFg: "#000000",
	SelectionBg: "#FFFF00",
	HeaderFg:    "#000000",
	HeaderBg:    "#00FFFF",
	StatusBarFg: "#000000",
	StatusBarBg: "#FFFFFF",
	StatusKey:   "#0000C0",

	DialogBorder: "#FFFF00",
	DialogTitle:  "#FFFF00",
}

var hcLightPalette = Palette{
	Text:  "#000000",
	Muted: "#303030",
	Faint: "#595959",

	Accent:    "#0000C0",
	User:      "#8B008B",
	Assistant: "#005F5F",
	Thinking:  "#303030",

	Border:      "#000000",
	BorderFocus: "#0000C0",

	Running:   "#0000C0",
	Success:   "#005F00",
	Error:     "#B00000",
	Warning:   "#6B4100",
	Denied:    "#9A2E00",
	Timeout:   "#5F00AF",
	Cancelled: "#303030",
	Cost:      "#5F3F00",

	SelectionFg: "#FFFFFF",
	SelectionBg: "#0000C0",
	HeaderFg:    "#FFFFFF",
	HeaderBg:    "#0000C0",
	StatusBarFg: "#FFFFFF",
	StatusBarBg: "#000000",
	StatusKey:   "#FFFF00",

	DialogBorder: "#0000C0",
	DialogTitle:  "#000000",
}
