"""How a command's output reaches the user: renderers, the live view, stderr lines, tables, cost words."""
