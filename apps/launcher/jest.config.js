module.exports = {
  displayName: 'launcher',
  preset: '../../jest.preset.js',
  rootDir: __dirname,
};
